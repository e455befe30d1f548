import { randomUUID } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { getExchangeSigner } from '../../shared/auth/exchange-keys.js';
import { signSessionToken, SESSION_TOKEN_TTL_SECONDS } from '../../shared/auth/session-tokens.js';
import { armFault } from '../../shared/db/core/faults.js';
import { SIGN_IN_ANSWER_FLOOR_MS, SIGN_IN_RATE_LIMITS } from '../../shared/domain/sign-in/email-sign-in.js';
import { call, localStack, makeOrganization } from '../support/api.js';
import { deliveredTo, freshEmail, invite, makeMember, removeUser, usersByEmail } from '../support/members.js';
import { expectProblem } from '../support/problems.js';
import {
  askSignIn,
  askSignInThroughEdge,
  clearOfWindowEdge,
  callFrom,
  codeOf,
  expireSignInCode,
  newSourceIp,
  newViewerIp,
  signIn,
  signInCodeFor,
  signInLinks,
  verifySignIn,
} from '../support/sign-in.js';

/** Issue 30 part 2: sign-in by email link, session tokens, sign-out, rate limits (DESIGN.md "The review app"). */
describe('sign-in by email link', () => {
  it('answers 202 with no body for a member and for an unknown address alike; only the member gets an email, whose link signs in', async () => {
    const { stack } = localStack();
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'contributor');
    const stranger = freshEmail('stranger');
    const ip = newSourceIp();

    const timed = async (email: string) => {
      const started = performance.now();
      const answer = await askSignIn(ip, email);
      return { answer, ms: performance.now() - started };
    };
    const { answer: known, ms: knownMs } = await timed(member.email);
    const { answer: unknown, ms: unknownMs } = await timed(stranger);
    const links = await signInLinks(member.email);

    expect([known.status, unknown.status]).toEqual([202, 202]);
    // Neither answers sooner than the floor, so the time does not tell a member's ask from a stranger's.
    expect(knownMs).toBeGreaterThanOrEqual(SIGN_IN_ANSWER_FLOOR_MS);
    expect(unknownMs).toBeGreaterThanOrEqual(SIGN_IN_ANSWER_FLOOR_MS);
    expect([known.body, unknown.body]).toEqual(['', '']);
    expect(known.headers.get('content-type')).toBe(unknown.headers.get('content-type'));
    expect(links).toHaveLength(1);
    expect(`${links[0]!.origin}${links[0]!.pathname}`).toBe(`${stack.baseUrl}/sign-in`);
    expect(codeOf(links[0]!)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await deliveredTo(stranger)).toEqual([]);
    const verified = await verifySignIn(ip, codeOf(links[0]!));
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body.data).toEqual({
      sessionToken: expect.any(String),
      expiresAt: expect.any(String),
      user: { id: member.userId, email: member.email, name: expect.any(String) },
    });
    const lifetime = Date.parse(verified.body.data.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan((SESSION_TOKEN_TTL_SECONDS - 60) * 1000);
    expect(lifetime).toBeLessThanOrEqual(SESSION_TOKEN_TTL_SECONDS * 1000);
  });

  it('answers 202 when the email cannot be sent (nothing tells the caller), and the next ask sends a link that works', async () => {
    localStack();
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'viewer');
    const ip = newSourceIp();
    await armFault('before-sign-in-email', member.email);

    const failed = await askSignIn(ip, member.email);
    const none = await deliveredTo(member.email);
    const session = await signIn(member.email, ip);

    expect(failed.status).toBe(202);
    expect(failed.body).toBe('');
    expect(none).toEqual([]);
    expect(session.user.id).toBe(member.userId);
  });

  it('signs in the seeded owner@review-board.localhost, who acts as owner of the seeded workspace', async () => {
    const { stack } = localStack();

    const session = await signIn('owner@review-board.localhost');
    const workspace = await call('GET', '/workspace', { key: session.sessionToken, query: { workspaceId: stack.workspaceId } });
    const users = await usersByEmail(stack.workspaceApiKey);
    const renamed = await call('PATCH', '/workspace', {
      key: session.sessionToken,
      query: { workspaceId: stack.workspaceId },
      body: { name: 'Website redesign' },
    });
    const who = await call('GET', '/auth/session', { key: session.sessionToken });

    expect(workspace.status, JSON.stringify(workspace.body)).toBe(200);
    expect(workspace.body.data).toMatchObject({ id: stack.workspaceId, name: 'Website redesign' });
    expect(users.get('owner@review-board.localhost')).toMatchObject({ id: session.user.id, role: 'owner', status: 'active' });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(who.status, JSON.stringify(who.body)).toBe(200);
    expect(who.body.data).toMatchObject({ user: session.user, expiresAt: session.expiresAt });
    expect(who.body.data.workspaces).toContainEqual(
      expect.objectContaining({ id: stack.workspaceId, organizationId: stack.organizationId, name: 'Website redesign', role: 'owner' }),
    );
  });

  it("acts with the member's role through the permission table: a viewer reads but cannot create markups (403), a contributor can", async () => {
    const org = await makeOrganization();
    const [viewer, contributor] = await Promise.all([makeMember(org.workspaceId, 'viewer'), makeMember(org.workspaceId, 'contributor')]);
    const [viewerSession, contributorSession] = await Promise.all([signIn(viewer.email), signIn(contributor.email)]);
    const body = { url: 'https://example.com/home', workspaceId: org.workspaceId };

    const read = await call('GET', '/markups', { key: viewerSession.sessionToken, query: { workspaceId: org.workspaceId } });
    const refused = await call('POST', '/markups/url', { key: viewerSession.sessionToken, body });
    const made = await call('POST', '/markups/url', { key: contributorSession.sessionToken, body });

    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expectProblem(refused, 403);
    expect(refused.body.type).toBe('urn:review-board:problem:insufficient-role');
    expect(refused.body.detail).toContain('viewer');
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body.data.workspaceId).toBe(org.workspaceId);
  });

  it('names its workspace: without workspaceId a workspace route is 400; a workspace it is not a member of is 403; a removed member is 403 on the next request', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const [member, owner] = await Promise.all([makeMember(org.workspaceId, 'contributor'), makeMember(org.workspaceId, 'owner')]);
    const session = await signIn(member.email);

    const unnamed = await call('GET', '/workspace', { key: session.sessionToken });
    const elsewhere = await call('GET', '/workspace', { key: session.sessionToken, query: { workspaceId: other.workspaceId } });
    const listWorkspaces = await call('GET', '/workspaces', { key: session.sessionToken });
    const before = await call('GET', '/workspace', { key: session.sessionToken, query: { workspaceId: org.workspaceId } });
    expect((await removeUser(owner.key, member.userId)).status).toBe(204);
    const after = await call('GET', '/workspace', { key: session.sessionToken, query: { workspaceId: org.workspaceId } });

    expectProblem(unnamed, 400);
    expect(unnamed.body.type).toBe('urn:review-board:problem:workspace-id-required');
    expectProblem(elsewhere, 403);
    expect(elsewhere.body.type).toBe('urn:review-board:problem:not-a-member');
    expectProblem(listWorkspaces, 403);
    expect(before.status).toBe(200);
    expectProblem(after, 403);
  });

  it('takes each code once: a second verify of the same code is 401', async () => {
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'viewer');
    const ip = newSourceIp();
    const code = await signInCodeFor(member.email, ip);

    const [first, second] = [await verifySignIn(ip, code), await verifySignIn(ip, code)];

    expect(first.status).toBe(200);
    expectProblem(second, 401);
    expect(second.body.detail).toMatch(/used already|expired|never issued/);
  });

  it('takes a code once even when two verifies race: one 200, one 401', async () => {
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'viewer');
    const ip = newSourceIp();
    const code = await signInCodeFor(member.email, ip);

    const answers = await Promise.all([verifySignIn(ip, code), verifySignIn(ip, code), verifySignIn(ip, code)]);

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401, 401]);
  });

  it('refuses an expired code (401) and an unknown one (401) alike', async () => {
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'viewer');
    const ip = newSourceIp();
    const code = await signInCodeFor(member.email, ip);
    await expireSignInCode(code);

    const expired = await verifySignIn(ip, code);
    const unknown = await verifySignIn(ip, 'A'.repeat(43));

    expectProblem(expired, 401);
    expectProblem(unknown, 401);
    expect(expired.body.detail).toBe(unknown.body.detail);
  });

  it('makes an invitee an active member at first sign-in, with the role of the invitation', async () => {
    const org = await makeOrganization();
    const admin = await makeMember(org.workspaceId, 'admin');
    const invitee = freshEmail('invitee');
    expect((await invite(admin.key, { emails: [invitee], role: 'viewer' })).status).toBe(204);
    const invited = (await usersByEmail(admin.key)).get(invitee);

    const session = await signIn(invitee);
    const listed = (await usersByEmail(admin.key)).get(invitee);
    const read = await call('GET', '/workspace', { key: session.sessionToken, query: { workspaceId: org.workspaceId } });
    const refused = await call('POST', '/markups/url', {
      key: session.sessionToken,
      body: { url: 'https://example.com/', workspaceId: org.workspaceId },
    });

    expect(invited).toMatchObject({ status: 'invited', role: 'viewer' });
    expect(session.user).toMatchObject({ id: invited!.id, email: invitee });
    expect(listed).toMatchObject({ status: 'active', role: 'viewer' });
    expect((await call('GET', '/auth/session', { key: session.sessionToken })).body.data.workspaces).toEqual([
      expect.objectContaining({ id: org.workspaceId, role: 'viewer' }),
    ]);
    expect(read.status).toBe(200);
    expectProblem(refused, 403);
  });

  it('signs out: the token is 401 from then on; an API key cannot sign out (403)', async () => {
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'contributor');
    const session = await signIn(member.email);
    const query = { workspaceId: org.workspaceId };

    const before = await call('GET', '/workspace', { key: session.sessionToken, query });
    const signedOut = await call('POST', '/auth/sign-out', { key: session.sessionToken });
    const after = await call('GET', '/workspace', { key: session.sessionToken, query });
    const again = await call('POST', '/auth/sign-out', { key: session.sessionToken });
    const withKey = await call('POST', '/auth/sign-out', { key: member.key });
    const readAfter = await call('GET', '/auth/session', { key: session.sessionToken });
    const anonymous = await call('POST', '/auth/sign-out');

    expect(before.status).toBe(200);
    expect(signedOut.status).toBe(204);
    expectProblem(after, 401);
    expect(after.body.detail).toContain('signed out');
    expectProblem(again, 401);
    expectProblem(withKey, 403);
    expect(withKey.body.type).toBe('urn:review-board:problem:session-token-required');
    expectProblem(anonymous, 401);
    expectProblem(readAfter, 401);
  });

  it('refuses an expired session token (401) and a session token whose signature does not verify', async () => {
    localStack();
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'contributor');
    const signer = await getExchangeSigner();
    const stale = await signSessionToken(signer, member.userId, Date.now() - (SESSION_TOKEN_TTL_SECONDS + 60) * 1000);
    const fresh = await signSessionToken(signer, member.userId);
    const [header, payload] = fresh.token.split('.');
    const forged = `${header}.${payload}.${Buffer.alloc(64).toString('base64url')}`;
    const query = { workspaceId: org.workspaceId };

    const expired = await call('GET', '/workspace', { key: stale.token, query });
    const valid = await call('GET', '/workspace', { key: fresh.token, query });
    const bad = await call('GET', '/workspace', { key: forged, query });

    expectProblem(expired, 401);
    expect(valid.status).toBe(200);
    expectProblem(bad, 401);
  });

  it(`limits links per address: one past the limit (${SIGN_IN_RATE_LIMITS.perAddress.limit}) in a window is 429 with Retry-After, for unknown addresses too`, async () => {
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'viewer');
    const stranger = freshEmail('stranger');
    await clearOfWindowEdge(SIGN_IN_RATE_LIMITS.perAddress.windowMs);
    const { limit } = SIGN_IN_RATE_LIMITS.perAddress;
    const ask = async (email: string) => {
      const answers = [];
      // Each from its own source IP: only the address's count can stop them.
      for (let i = 0; i <= limit; i += 1) answers.push(await askSignIn(newSourceIp(), email));
      return answers;
    };

    const [forMember, forStranger] = await Promise.all([ask(member.email), ask(stranger)]);

    for (const answers of [forMember, forStranger]) {
      expect(answers.slice(0, limit).map((answer) => answer.status)).toEqual(Array(limit).fill(202));
      const limited = answers[limit]!;
      expectProblem(limited, 429);
      expect(limited.body.type).toBe('urn:review-board:problem:rate-limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(SIGN_IN_RATE_LIMITS.perAddress.windowMs / 1000);
      expect(limited.body.detail).toContain('email address');
    }
    expect(await signInLinks(member.email, limit)).toHaveLength(limit);
  });

  it(`limits requests per source IP: one past the limit (${SIGN_IN_RATE_LIMITS.perSourceIp.limit}) from one address is 429 with Retry-After`, async () => {
    const ip = newSourceIp();
    await clearOfWindowEdge(SIGN_IN_RATE_LIMITS.perSourceIp.windowMs);
    const { limit } = SIGN_IN_RATE_LIMITS.perSourceIp;

    // At once: the count is one atomic ADD, so exactly `limit` of them fit whatever their order.
    const answers = await Promise.all(Array.from({ length: limit }, () => askSignIn(ip, freshEmail('spray'))));
    const limited = await askSignIn(ip, freshEmail('spray'));
    const elsewhere = await askSignIn(newSourceIp(), freshEmail('spray'));

    expect(answers.map((answer) => answer.status)).toEqual(Array(limit).fill(202));
    expectProblem(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.body.detail).toContain('network address');
    expect(elsewhere.status).toBe(202);
  });

  it("behind the distribution, counts the viewer's address (X-Viewer-Address with the distribution's X-Origin-Verify), not the edge's that many viewers share", async () => {
    const edge = newSourceIp();
    const [viewer, neighbour] = [newViewerIp(), newViewerIp()];
    await clearOfWindowEdge(SIGN_IN_RATE_LIMITS.perSourceIp.windowMs);
    const { limit } = SIGN_IN_RATE_LIMITS.perSourceIp;

    const answers = await Promise.all(Array.from({ length: limit }, () => askSignInThroughEdge(edge, viewer, freshEmail('edge'))));
    const limited = await askSignInThroughEdge(edge, viewer, freshEmail('edge'));
    const throughSameEdge = await askSignInThroughEdge(edge, neighbour, freshEmail('edge'));
    const fromEdgeItself = await askSignIn(edge, freshEmail('edge'));

    expect(answers.map((answer) => answer.status)).toEqual(Array(limit).fill(202));
    expectProblem(limited, 429);
    expect(limited.body.detail).toContain('network address');
    expect(throughSameEdge.status).toBe(202);
    expect(fromEdgeItself.status).toBe(202);
  });

  it("ignores X-Viewer-Address without the distribution's proof (a caller of the execute-api endpoint naming a new address each time), or with a wrong one: its source IP is counted", async () => {
    await clearOfWindowEdge(SIGN_IN_RATE_LIMITS.perSourceIp.windowMs);
    const { limit } = SIGN_IN_RATE_LIMITS.perSourceIp;
    const spoofers = [
      { ip: newSourceIp(), proof: null },
      { ip: newSourceIp(), proof: `${inject('originVerify')}x` },
      { ip: newSourceIp(), proof: '' },
    ];

    for (const { ip, proof } of spoofers) {
      const answers = await Promise.all(
        Array.from({ length: limit }, () => askSignInThroughEdge(ip, newViewerIp(), freshEmail('spoof'), proof)),
      );
      const limited = await askSignInThroughEdge(ip, newViewerIp(), freshEmail('spoof'), proof);

      expect(answers.map((answer) => answer.status)).toEqual(Array(limit).fill(202));
      expectProblem(limited, 429);
    }
  });

  it('answers bad bodies with 400 problems naming the field', async () => {
    const ip = newSourceIp();

    expectProblem(await askSignIn(ip, undefined), 400, '/body/email');
    expectProblem(await askSignIn(ip, 'not an address'), 400, '/body/email');
    expectProblem(await askSignIn(ip, 42), 400, '/body/email');
    expectProblem(await askSignIn(ip, `${'a'.repeat(250)}@example.com`), 400, '/body/email');
    expectProblem(await verifySignIn(ip, undefined), 400, '/body/code');
    expectProblem(await verifySignIn(ip, 'short'), 400, '/body/code');
    expectProblem(await verifySignIn(ip, `${'A'.repeat(42)}!`), 400, '/body/code');
    expectProblem(await verifySignIn(ip, { code: randomUUID() }), 400, '/body/code');
    expectProblem(
      await callFrom(ip, 'POST', '/auth/email-sign-in', { rawBody: '{"email":', headers: { 'Content-Type': 'application/json' } }),
      400,
    );
  });
});
