import { describe, expect, it } from 'vitest';
import { call, makeOrganization, type ApiResponse, type Org } from '../support/api.js';
import { customerJwt, exchange, makeCustomerKeys, makeInstallation, type CustomerKeys } from '../support/customer-jwts.js';
import { deleteExternalUser, newExternalId } from '../support/external-users.js';
import { createInstallation } from '../support/installations.js';
import { expectProblem } from '../support/problems.js';
import { idpToken, sdkExchange } from '../support/sdk.js';
import { createThread, makeTypedMarkup, reply, threadBody } from '../support/threads.js';
import type { MarkupRecord } from '../../shared/db/items.js';

/**
 * Issue 28 item 4 (DESIGN.md "Credentials die with what they stand for"): an exchange token of a
 * deleted installation or a deleted external user is refused with 401 on its very next request,
 * whatever that request is, not when the token expires; a token of what still lives keeps working.
 * Tokens come from real exchanges (customer JWTs), as an embedded client gets them.
 */

interface Installed {
  keys: CustomerKeys;
  config: { installationId: string; expectedAud: string; expectedIss: string };
  installationId: string;
}

async function install(org: Org): Promise<Installed> {
  const keys = makeCustomerKeys();
  const { installation, config } = await makeInstallation(org, keys);
  return { keys, config, installationId: installation.id };
}

/** An owner end user's exchange token through POST /auth/exchange. */
async function tokenOf(installed: Installed, sub: string): Promise<string> {
  const response = await exchange(await customerJwt(installed.keys, installed.config, { sub, markupRole: 'project:owner' }));
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.exchangeToken as string;
}

/**
 * The records every kind of end-user call acts on, made by `token`'s end user (so the calls its
 * role limits to their author, editing a message, are its own): a thread with a reply, and a
 * second thread and reply for the deletes.
 */
async function recordsOf(token: string, markup: MarkupRecord) {
  const thread = await createThread(token, markup);
  const message = await reply(token, thread.id, { content: 'Mine' });
  const doomedThread = await createThread(token, markup);
  const doomedMessage = await reply(token, thread.id, { content: 'To delete' });
  return { thread, message, doomedThread, doomedMessage };
}

type Records = Awaited<ReturnType<typeof recordsOf>>;

const pin = { viewportXPercentage: 10, viewportYPercentage: 20 };

/** Every kind of call an end user makes, each on `records`. */
function callsOf(markup: MarkupRecord, records: Records): [string, (token: string) => Promise<ApiResponse>][] {
  const { thread, message, doomedThread, doomedMessage } = records;
  return [
    ['read the markup', (key) => call('GET', `/markups/${markup.id}`, { key })],
    ['rename the markup', (key) => call('POST', `/markups/${markup.id}`, { key, body: { name: `Renamed ${Date.now()}` } })],
    ['read the view modes', (key) => call('GET', `/markups/${markup.id}/view-modes`, { key })],
    [
      'ask an upload policy',
      (key) =>
        call('POST', '/uploads/upload-policy', {
          key,
          body: { resourceType: 'message_attachment', resourceId: markup.id, filename: 'a.png', contentType: 'image/png', filesize: 100 },
        }),
    ],
    ['list threads', (key) => call('GET', '/threads', { key, query: { markupId: markup.id } })],
    ['create a thread', (key) => call('POST', '/threads', { key, body: threadBody(markup) })],
    ['read a thread', (key) => call('GET', `/threads/${thread.id}`, { key })],
    ['resolve', (key) => call('POST', `/threads/${thread.id}/resolve`, { key })],
    ['unresolve', (key) => call('POST', `/threads/${thread.id}/unresolve`, { key })],
    ['mark a thread read', (key) => call('POST', `/threads/${thread.id}/read`, { key })],
    ['move the pin', (key) => call('PATCH', `/threads/${thread.id}/move-pin`, { key, body: pin })],
    ['reply', (key) => call('POST', `/threads/${thread.id}/messages`, { key, body: { content: 'A reply' } })],
    ['read a message', (key) => call('GET', `/messages/${message.id}`, { key })],
    ['edit a message', (key) => call('PATCH', `/messages/${message.id}`, { key, body: { content: `Edited ${Date.now()}` } })],
    ['mark a message read', (key) => call('POST', `/messages/${message.id}/read`, { key })],
    ['delete a message', (key) => call('DELETE', `/messages/${doomedMessage.id}`, { key })],
    ['delete a thread', (key) => call('DELETE', `/threads/${doomedThread.id}`, { key })],
  ];
}

/** Each call by `dead` is a 401 and changes nothing; each by `live` succeeds. */
async function expectDeadAndLive(
  org: Org,
  markup: MarkupRecord,
  dead: { token: string; records: Records },
  live: { token: string; records: Records },
) {
  const before = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data;
  const name = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name;
  for (const [label, send] of callsOf(markup, dead.records)) {
    const response = await send(dead.token);
    expect(response.status, `${label}: ${JSON.stringify(response.body)}`).toBe(401);
    expectProblem(response, 401);
  }
  expect((await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data).toEqual(before);
  expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name).toBe(name);
  for (const [label, send] of callsOf(markup, live.records)) {
    const response = await send(live.token);
    expect(response.status, `${label}: ${JSON.stringify(response.body)}`).toBeLessThan(300);
  }
}

describe('an exchange token dies with what it stands for (401 on the next request, DESIGN.md "Credentials die with what they stand for")', () => {
  it('refuses every call of a token whose installation was deleted; a token of another installation still works', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const [doomed, kept] = [await install(org), await install(org)];
    const deadToken = await tokenOf(doomed, newExternalId('sub'));
    const liveToken = await tokenOf(kept, newExternalId('sub'));
    const dead = { token: deadToken, records: await recordsOf(deadToken, markup) };
    const live = { token: liveToken, records: await recordsOf(liveToken, markup) };

    expect((await call('DELETE', `/installations/${doomed.installationId}`, { key: org.workspaceKey })).status).toBe(204);

    await expectDeadAndLive(org, markup, dead, live);
  });

  it('refuses every call of a token whose external user was deleted; another user of the same installation still works', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const installed = await install(org);
    const [doomedSub, keptSub] = [newExternalId('sub'), newExternalId('sub')];
    const deadToken = await tokenOf(installed, doomedSub);
    const liveToken = await tokenOf(installed, keptSub);
    const dead = { token: deadToken, records: await recordsOf(deadToken, markup) };
    const live = { token: liveToken, records: await recordsOf(liveToken, markup) };

    expect((await deleteExternalUser(org.workspaceKey, doomedSub)).status).toBe(204);

    await expectDeadAndLive(org, markup, dead, live);
  });

  it('refuses a token of a deleted external user even once the same externalId exchanges again (a new user), whose new token works', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const installed = await install(org);
    const sub = newExternalId('sub');
    const oldToken = await tokenOf(installed, sub);
    expect((await call('GET', '/threads', { key: oldToken, query: { markupId: markup.id } })).status).toBe(200);

    expect((await deleteExternalUser(org.workspaceKey, sub)).status).toBe(204);
    const newToken = await tokenOf(installed, sub);

    expectProblem(await call('GET', '/threads', { key: oldToken, query: { markupId: markup.id } }), 401);
    expectProblem(await call('POST', '/threads', { key: oldToken, body: threadBody(markup) }), 401);
    expect((await call('POST', '/threads', { key: newToken, body: threadBody(markup) })).status).toBe(200);
  });

  it('answers the dead token 401, not what its request would have answered: a missing thread, a bad body, a replayed Idempotency-Key', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const installed = await install(org);
    const token = await tokenOf(installed, newExternalId('sub'));
    const idempotencyKey = `liveness-${crypto.randomUUID()}`;
    const first = await call('POST', '/threads', { key: token, body: threadBody(markup), headers: { 'Idempotency-Key': idempotencyKey } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);

    expect((await call('DELETE', `/installations/${installed.installationId}`, { key: org.workspaceKey })).status).toBe(204);

    expectProblem(await call('GET', `/threads/${crypto.randomUUID()}`, { key: token }), 401);
    expectProblem(await call('POST', '/threads', { key: token, body: { projectId: markup.id } }), 401);
    expectProblem(
      await call('POST', '/threads', { key: token, body: threadBody(markup), headers: { 'Idempotency-Key': idempotencyKey } }),
      401,
    );
  });

  it('refuses an SDK exchange token (identity-provider user) once its installation or its external user is deleted', async () => {
    const org = await makeOrganization();
    const origin = 'https://shop.example.com';
    const markup = await makeTypedMarkup(org, 'webpage', { url: `${origin}/cart` });
    const sdkToken = async (publicKey: string, sub: string) => {
      const response = await sdkExchange(await idpToken({ sub }), { publicKey, markupId: markup.id, sdkOrigin: origin });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body.data.exchangeToken as string;
    };
    const [doomed, kept] = [
      await createInstallation(org.workspaceKey, { allowedOrigins: [origin] }),
      await createInstallation(org.workspaceKey, { allowedOrigins: [origin] }),
    ];
    const [ofDeletedInstallation, ofDeletedUser, live] = [
      await sdkToken(doomed.publicKey, newExternalId('idp')),
      await sdkToken(kept.publicKey, newExternalId('idp')),
      await sdkToken(kept.publicKey, newExternalId('idp')),
    ];
    for (const token of [ofDeletedInstallation, ofDeletedUser, live])
      expect((await call('POST', '/threads', { key: token, body: threadBody(markup) })).status).toBe(200);
    const deletedSub = JSON.parse(Buffer.from(ofDeletedUser.split('.')[1]!, 'base64url').toString()).ext as string;

    expect((await call('DELETE', `/installations/${doomed.id}`, { key: org.workspaceKey })).status).toBe(204);
    expect((await deleteExternalUser(org.workspaceKey, deletedSub)).status).toBe(204);

    for (const token of [ofDeletedInstallation, ofDeletedUser]) {
      expectProblem(await call('POST', '/threads', { key: token, body: threadBody(markup) }), 401);
      expectProblem(await call('GET', '/threads', { key: token, query: { markupId: markup.id } }), 401);
    }
    expect((await call('POST', '/threads', { key: live, body: threadBody(markup) })).status).toBe(200);
  });
});
