import { describe, expect, it } from 'vitest';
import { parseApiKey } from '../../shared/auth/api-key-format.js';
import { getConfig } from '../../shared/config.js';
import { revokeApiKey } from '../../shared/db/api-keys.js';
import { getStoredEventBody } from '../../shared/db/event-bodies.js';
import { hashLiveTicket, setLiveTicketExpiry } from '../../shared/db/live.js';
import { call, localStack, makeOrganization } from '../support/api.js';
import { makeEndUser } from '../support/end-users.js';
import { makeMember, removeUser } from '../support/members.js';
import { signIn } from '../support/sign-in.js';
import { LiveClient, liveTicket, type LiveMessage } from '../support/live.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/**
 * Issue 32 items 2-4 through the local gateway (DESIGN.md "Live updates"): tickets, the socket on
 * the gateway's own port, subscriptions authorized like GET /markups/{id}, events in seq order with
 * their webhook bodies, catching up with `after`, and sockets closed when their credential dies.
 */

const seqsOf = (messages: readonly { seq: number }[]) => messages.map((message) => message.seq);

/** seq n+1 .. n+count */
const run = (after: number, count: number) => Array.from({ length: count }, (_, i) => after + i + 1);

/** How the socket closed, or undefined when it is still open after `ms`. */
function closedWithin(client: LiveClient, ms: number): Promise<{ code: number; reason: string } | undefined> {
  return Promise.race([client.closed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms))]);
}

/** A member of a new workspace with `role`, signed in, whose session's socket is subscribed to one of its markups. */
async function memberSessionSubscribed(role: 'viewer' | 'contributor') {
  const org = await makeOrganization();
  const markup = await makeTypedMarkup(org, 'image');
  const member = await makeMember(org.workspaceId, role);
  const session = await signIn(member.email);
  const client = await LiveClient.connect(session.sessionToken);
  expect(await client.subscribe(markup.id)).toMatchObject({ type: 'subscribed', markupId: markup.id });
  return { org, markup, member, session, client };
}

async function refusal(client: LiveClient, markupId: string): Promise<Extract<LiveMessage, { type: 'error' }>> {
  const answer = await client.subscribe(markupId);
  expect(answer.type, JSON.stringify(answer)).toBe('error');
  return answer as Extract<LiveMessage, { type: 'error' }>;
}

describe('POST /live/tickets', () => {
  it("answers a ws URL on the gateway's own port with a ticket valid 60 s, for an API key and an exchange token, never carrying the credential", async () => {
    const { stack } = localStack();
    const org = await makeOrganization();
    const before = Date.now();
    const ticket = await liveTicket(org.workspaceKey);
    const port = new URL(stack.baseUrl).port;
    expect(ticket.url).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${port}/api/v2/live\\?ticket=[A-Za-z0-9_-]{40,}$`));
    expect(ticket.url).not.toContain(org.workspaceKey);
    const expiresAt = Date.parse(ticket.expiresAt);
    expect(expiresAt - before).toBeGreaterThanOrEqual(59_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(60_000);

    const markup = await makeTypedMarkup(org, 'image');
    const endUser = await makeEndUser({ organizationId: org.organizationId, workspaceId: org.workspaceId, markupId: markup.id });
    const client = await LiveClient.connect(endUser.token);
    expect(await client.subscribe(markup.id)).toMatchObject({ type: 'subscribed', markupId: markup.id });
    client.close();
  });

  it('refuses a request without a credential (401)', async () => {
    localStack();
    expect((await call('POST', '/live/tickets')).status).toBe(401);
  });

  it('opens one socket per ticket: a used, an expired, a missing or a made-up ticket is refused at the upgrade with 401', async () => {
    const org = await makeOrganization();
    const ticket = await liveTicket(org.workspaceKey);
    const first = await LiveClient.open(ticket.url);
    await expect(LiveClient.open(ticket.url)).rejects.toMatchObject({ status: 401 });
    first.close();

    const expired = await liveTicket(org.workspaceKey);
    await setLiveTicketExpiry(hashLiveTicket(new URL(expired.url).searchParams.get('ticket')!), Date.now() - 1);
    await expect(LiveClient.open(expired.url)).rejects.toMatchObject({ status: 401 });

    const bare = new URL(ticket.url);
    bare.search = '';
    await expect(LiveClient.open(bare.href)).rejects.toMatchObject({ status: 401 });
    bare.searchParams.set('ticket', 'not-a-ticket');
    await expect(LiveClient.open(bare.href)).rejects.toMatchObject({ status: 401 });
  });
});

describe('live subscriptions', () => {
  it('sends two subscribers of one markup the same events in the same seq order, each the webhook body', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const [one, two] = await Promise.all([LiveClient.connect(org.workspaceKey), LiveClient.connect(org.orgKey)]);
    const [first, second] = [await one.subscribe(markup.id), await two.subscribe(markup.id)];
    expect(first).toMatchObject({ type: 'subscribed', markupId: markup.id });
    expect(second).toEqual(first);
    const start = (first as { seq: number }).seq;

    const thread = await createThread(org.workspaceKey, markup);
    await reply(org.workspaceKey, thread.id, { content: 'One' });
    await reply(org.orgKey, thread.id, { content: 'Two' });
    expect((await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey })).status).toBeLessThan(300);

    for (const client of [one, two]) await client.until(() => client.events(markup.id).length >= 4);
    expect(seqsOf(one.events(markup.id))).toEqual(run(start, 4));
    expect(one.events(markup.id)).toEqual(two.events(markup.id));
    expect(one.events(markup.id).map((message) => message.event.type)).toEqual([
      'comment_created',
      'comment_reply_created',
      'comment_reply_created',
      'comment_resolved',
    ]);
    for (const message of one.events(markup.id)) {
      expect(Object.keys(message.event).sort()).toEqual(['createdAt', 'data', 'id', 'type', 'workspaceId']);
      // The frozen webhook body of the event, byte for byte the same JSON.
      expect(message.event).toEqual(JSON.parse((await getStoredEventBody(message.event.id))!));
    }
    one.close();
    two.close();
  });

  it('catches a subscriber that reconnects with `after` up on exactly what it missed, then goes on live without a duplicate', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const before = await LiveClient.connect(org.workspaceKey);
    const start = ((await before.subscribe(markup.id)) as { seq: number }).seq;
    const thread = await createThread(org.workspaceKey, markup);
    await before.until(() => before.events(markup.id).length >= 1);
    const seen = before.events(markup.id).at(-1)!.seq;
    before.close();
    await before.closed;

    // Missed while away: three replies.
    for (const content of ['a', 'b', 'c']) await reply(org.workspaceKey, thread.id, { content });

    const after = await LiveClient.connect(org.workspaceKey);
    const answer = await after.subscribe(markup.id, seen);
    expect(answer).toMatchObject({ type: 'subscribed', markupId: markup.id, seq: start + 4 });
    await after.until(() => after.events(markup.id).length >= 3);
    await reply(org.workspaceKey, thread.id, { content: 'd' });
    await after.until(() => after.events(markup.id).length >= 4);
    expect(seqsOf(after.events(markup.id))).toEqual(run(seen, 4));
    expect(after.events(markup.id).map((message) => message.event.data.message?.content ?? null)).toEqual(
      ['a', 'b', 'c', 'd'].map((text) => expect.stringContaining(text)),
    );
    after.close();
  });

  it('gives subscribers that join, and rejoin with `after`, while 20 comments are made at once every seq once and in order', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const steady = await LiveClient.connect(org.workspaceKey);
    const start = ((await steady.subscribe(markup.id)) as { seq: number }).seq;
    const writes = Promise.all(Array.from({ length: 20 }, () => createThread(org.workspaceKey, markup)));
    // Joining while the writes land: from the start (`after`), and from wherever the log is (no `after`).
    const late = await LiveClient.connect(org.orgKey);
    const lateFrom = ((await late.subscribe(markup.id, start)) as { seq: number }).seq;
    const fresh = await LiveClient.connect(org.workspaceKey);
    const freshFrom = ((await fresh.subscribe(markup.id)) as { seq: number }).seq;
    await writes;
    // Where each subscriber's events start: `late` asked for everything after `start` (its missed
    // events come after its `subscribed`); `fresh` from its subscribed seq, which is already the last
    // when it joined after the last write, and then it gets no event at all.
    const from = new Map([
      [steady, start],
      [late, start],
      [fresh, freshFrom],
    ]);
    for (const [client, after] of from) await client.until(() => (client.events(markup.id).at(-1)?.seq ?? after) === start + 20);
    expect(seqsOf(steady.events(markup.id))).toEqual(run(start, 20));
    expect(seqsOf(late.events(markup.id))).toEqual(run(start, 20));
    expect(lateFrom).toBeGreaterThanOrEqual(start);
    expect(seqsOf(fresh.events(markup.id))).toEqual(run(freshFrom, start + 20 - freshFrom));
    expect(late.events(markup.id)).toEqual(steady.events(markup.id));
    for (const client of [steady, late, fresh]) client.close();
  });

  it("refuses, as GET /markups/{id} does, another workspace's markup, a missing one, and a bound end user's other markup; a malformed message is a 400", async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const mine = await makeTypedMarkup(org, 'image');
    const theirs = await makeTypedMarkup(other, 'image');
    const client = await LiveClient.connect(org.workspaceKey);

    const foreign = await refusal(client, theirs.id);
    const get = await call('GET', `/markups/${theirs.id}`, { key: org.workspaceKey });
    expect(foreign.status).toBe(get.status);
    expect(foreign.detail).toBe(get.body.detail);
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await refusal(client, missing)).status).toBe(404);

    const bound = await makeEndUser({
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      markupId: mine.id,
      markupRole: 'project:viewer',
    });
    const sibling = await makeTypedMarkup(org, 'image');
    const endUser = await LiveClient.connect(bound.token);
    const out = await refusal(endUser, sibling.id);
    expect(out.status).toBe((await call('GET', `/markups/${sibling.id}`, { key: bound.token })).status);
    expect(out.status).toBe(403);
    expect(await endUser.subscribe(mine.id)).toMatchObject({ type: 'subscribed', markupId: mine.id });

    const sent = client.messages.length;
    client.send('not json');
    client.send({ type: 'unsubscribe', markupId: mine.id });
    client.send({ type: 'subscribe', markupId: mine.id, after: -1 });
    client.send({ type: 'subscribe', markupId: 'nope' });
    const errors = (await client.until((messages) => messages.length >= sent + 4)).slice(sent);
    expect(errors).toEqual([
      { type: 'error', markupId: null, status: 400, detail: expect.stringContaining('JSON object') },
      { type: 'error', markupId: mine.id, status: 400, detail: expect.stringContaining('"type"') },
      { type: 'error', markupId: mine.id, status: 400, detail: expect.stringContaining('"after"') },
      { type: 'error', markupId: null, status: 400, detail: expect.stringContaining('"markupId"') },
    ]);
    // Still open and usable after the refusals.
    expect(await client.subscribe(mine.id)).toMatchObject({ type: 'subscribed' });
    client.close();
    endUser.close();
  });
});

// Each test waits on the gateway's periodic credential check after setup of its own; a full run on
// two loaded cores has taken more than the default 30 s for setup and close together.
describe('who sees what after a credential dies', { timeout: 120_000 }, () => {
  it('closes the socket of a revoked API key (4401), and refuses its next ticket', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const client = await LiveClient.connect(org.workspaceKey);
    await client.subscribe(markup.id);
    await revokeApiKey(parseApiKey(org.workspaceKey)!.keyId);
    const closed = await closedWithin(client, 60_000);
    expect(closed).toMatchObject({ code: 4401 });
    expect((await call('POST', '/live/tickets', { key: org.workspaceKey })).status).toBe(401);
  });

  it("closes the socket of a session that signed out, and lets a viewer member's session subscribe while it lasts", async () => {
    const { session, client } = await memberSessionSubscribed('viewer');
    expect((await call('POST', '/auth/sign-out', { key: session.sessionToken })).status).toBe(204);
    expect(await closedWithin(client, 60_000)).toMatchObject({ code: 4401 });
  });

  it('closes the socket of an end user whose installation was deleted', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const endUser = await makeEndUser({ organizationId: org.organizationId, workspaceId: org.workspaceId, markupId: markup.id });
    const client = await LiveClient.connect(endUser.token);
    await client.subscribe(markup.id);
    const installations = await call('GET', '/installations', { key: org.workspaceKey });
    for (const installation of installations.body.data.data as { id: string }[]) {
      expect((await call('DELETE', `/installations/${installation.id}`, { key: org.workspaceKey })).status).toBeLessThan(300);
    }
    const closed = await closedWithin(client, 60_000);
    expect(closed).toMatchObject({ code: 4401 });
  });

  it('closes the socket of an exchange token once it expired (the client comes back with a fresh token)', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const spec = { organizationId: org.organizationId, workspaceId: org.workspaceId, markupId: markup.id };
    const lifetime = getConfig().exchangeTokenTtlSeconds * 1000;
    // A token with a few seconds left; on a loaded machine the ticket and upgrade may take longer
    // than that, so a token that expired before its socket opened is minted again with more left.
    let client: LiveClient | undefined;
    for (const left of [3_000, 10_000, 30_000]) {
      const endUser = await makeEndUser(spec, Date.now() - lifetime + left);
      try {
        client = await LiveClient.connect(endUser.token);
        break;
      } catch (error) {
        if (!String(error).includes('upgrade refused: 401')) throw error;
      }
    }
    expect(client, 'no token lived long enough to open a socket').toBeDefined();
    expect(await client!.subscribe(markup.id)).toMatchObject({ type: 'subscribed' });
    expect(await closedWithin(client!, 60_000)).toMatchObject({ code: 4401 });
    // The client's way back: a fresh token opens a socket and subscribes again.
    const again = await LiveClient.connect((await makeEndUser(spec)).token);
    expect(await again.subscribe(markup.id)).toMatchObject({ type: 'subscribed', markupId: markup.id });
    again.close();
  });
});

describe('subscriptions that no longer hold', () => {
  it('ends a subscription whose markup moved into a workspace the credential cannot read, with the error GET would answer, and sends it nothing of there', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const client = await LiveClient.connect(org.workspaceKey);
    expect(await client.subscribe(markup.id)).toMatchObject({ type: 'subscribed' });
    const second = await makeSecondWorkspace(org.orgKey);
    const moved = await call('PATCH', `/items/${markup.id}/move`, { key: org.orgKey, body: { parentFolderId: second.rootFolderId } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    const secret = await createThread(org.orgKey, markup, { content: 'Said in the second workspace', message: undefined });
    const seen = await client.until((messages) => messages.some((message) => message.type === 'error' && message.markupId === markup.id));
    const refusal = seen.find((message) => message.type === 'error' && message.markupId === markup.id);
    const asGet = await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey });
    expect(refusal).toMatchObject({ status: asGet.status, detail: asGet.body.detail });
    expect(JSON.stringify(client.events(markup.id))).not.toContain(secret.id);
    // And the org key, which reads both workspaces, keeps its subscription through the move.
    const orgClient = await LiveClient.connect(org.orgKey);
    expect(await orgClient.subscribe(markup.id)).toMatchObject({ type: 'subscribed' });
    const after = await createThread(org.orgKey, markup, { content: 'Still followed', message: undefined });
    await orgClient.until((messages) => JSON.stringify(messages).includes(after.id));
    expect(JSON.stringify(orgClient.events(markup.id))).toContain(after.id);
    client.close();
    orgClient.close();
  });

  it('ends the subscription of a session whose member was removed from the workspace, with the error GET would answer, and sends it nothing said after', async () => {
    const { org, markup, member, session, client } = await memberSessionSubscribed('contributor');
    // The session outlives the membership (it signs the person in, not into one workspace).
    expect((await removeUser(org.workspaceKey, member.userId)).status).toBe(204);
    const secret = await createThread(org.workspaceKey, markup, { content: 'Said after the removal', message: undefined });
    const seen = await client.until((messages) => messages.some((message) => message.type === 'error' && message.markupId === markup.id));
    const refusal = seen.find((message) => message.type === 'error' && message.markupId === markup.id);
    const asGet = await call('GET', `/markups/${markup.id}`, { key: session.sessionToken });
    expect(asGet.status).toBe(403);
    expect(refusal).toMatchObject({ status: asGet.status, detail: asGet.body.detail });
    expect(JSON.stringify(client.events(markup.id))).not.toContain(secret.id);
    client.close();
  });

  it("refuses an after beyond the markup's last seq (400), which would otherwise hide every event to come", async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const client = await LiveClient.connect(org.workspaceKey);
    const answer = await client.subscribe(markup.id, 1000);
    expect(answer).toMatchObject({ type: 'error', markupId: markup.id, status: 400 });
    expect(await client.subscribe(markup.id, 0)).toMatchObject({ type: 'subscribed', seq: 0 });
    client.close();
  });
});
