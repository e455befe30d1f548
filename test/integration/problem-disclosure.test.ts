import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { itemKey } from '../../shared/db/items.js';
import { call, makeOrganization, type ApiResponse } from '../support/api.js';
import { endUserToken } from '../support/end-users.js';
import { expectProblem } from '../support/problems.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/**
 * Issue 28 item 7 (DESIGN.md "Problems name only what the caller may see"): a refusal names what
 * the caller sent, never what the service looked up behind it: not the markup a thread or message
 * it asked for is on, not the workspace or organization that holds it.
 */

const pin = { viewportXPercentage: 10, viewportYPercentage: 20 };

/** Every kind of call that reaches a markup through a thread or a message. */
function callsOn(threadId: string, messageId: string): [string, (key: string) => Promise<ApiResponse>][] {
  return [
    ['read the thread', (key) => call('GET', `/threads/${threadId}`, { key })],
    ['resolve the thread', (key) => call('POST', `/threads/${threadId}/resolve`, { key })],
    ['unresolve the thread', (key) => call('POST', `/threads/${threadId}/unresolve`, { key })],
    ['mark the thread read', (key) => call('POST', `/threads/${threadId}/read`, { key })],
    ['move the pin', (key) => call('PATCH', `/threads/${threadId}/move-pin`, { key, body: pin })],
    ['read the screenshot', (key) => call('GET', `/threads/${threadId}/screenshot`, { key })],
    ['reply', (key) => call('POST', `/threads/${threadId}/messages`, { key, body: { content: 'A reply' } })],
    ['delete the thread', (key) => call('DELETE', `/threads/${threadId}`, { key })],
    ['read the message', (key) => call('GET', `/messages/${messageId}`, { key })],
    ['edit the message', (key) => call('PATCH', `/messages/${messageId}`, { key, body: { content: 'Edited' } })],
    ['mark the message read', (key) => call('POST', `/messages/${messageId}/read`, { key })],
    ['delete the message', (key) => call('DELETE', `/messages/${messageId}`, { key })],
  ];
}

/** Each call by `key` is a 403 whose text holds none of `hidden`. */
async function expectRefusedWithout(key: string, calls: ReturnType<typeof callsOn>, hidden: Record<string, string>) {
  for (const [label, send] of calls) {
    const response = await send(key);
    expectProblem(response, 403);
    const text = JSON.stringify(response.body);
    for (const [what, id] of Object.entries(hidden)) expect(text, `${label} names ${what}: ${text}`).not.toContain(id);
  }
}

describe('403s name only what the caller may see (DESIGN.md "Problems name only what the caller may see")', () => {
  it("a token bound to one markup, asking for another markup's thread or message, is not told that markup's id", async () => {
    const org = await makeOrganization();
    const [own, other] = [await makeTypedMarkup(org, 'webpage'), await makeTypedMarkup(org, 'webpage')];
    const thread = await createThread(org.workspaceKey, other);
    const message = await reply(org.workspaceKey, thread.id, { content: 'On the other markup' });
    const token = await endUserToken({
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      markupRole: 'project:owner',
      markupId: own.id,
    });

    await expectRefusedWithout(token, callsOn(thread.id, message.id), { 'the other markup': other.id });
    const refused = await call('GET', `/messages/${message.id}`, { key: token });
    expect(refused.body.type).toMatch(/markup-out-of-scope$/);
    expect(refused.body.detail).toBe(
      `This exchange token is bound to markup ${own.id} and cannot act on message ${message.id}, which is on another markup.`,
    );
  });

  it("a workspace key asking for another workspace's thread or message is told neither that workspace nor the markup", async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const markup = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: second.id }, 'webpage');
    const thread = await createThread(org.orgKey, markup);
    const message = await reply(org.orgKey, thread.id, { content: 'In the second workspace' });

    await expectRefusedWithout(org.workspaceKey, callsOn(thread.id, message.id), {
      'the other workspace': second.id,
      'the markup': markup.id,
    });
    const refused = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });
    expect(refused.body.detail).toBe(
      `This API key is scoped to workspace ${org.workspaceId} and cannot act on thread ${thread.id}, which is in another workspace.`,
    );
  });

  it("another organization's key or exchange token asking for a thread or message is told neither the markup nor its workspace", async () => {
    const org = await makeOrganization();
    const stranger = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const message = await reply(org.workspaceKey, thread.id, { content: 'Not yours' });
    const token = await endUserToken({
      organizationId: stranger.organizationId,
      workspaceId: stranger.workspaceId,
      markupRole: 'project:owner',
    });
    const hidden = { 'the markup': markup.id, 'its workspace': org.workspaceId, 'its organization': org.organizationId };

    for (const key of [stranger.orgKey, stranger.workspaceKey, token])
      await expectRefusedWithout(key, callsOn(thread.id, message.id), hidden);
  });

  it('a thread or message whose markup is gone (a crash between the deletions) is a 404 naming the thread or message, not the markup', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const message = await reply(org.workspaceKey, thread.id, { content: 'Left behind' });
    await getDb().send(new DeleteCommand({ TableName: getConfig().tableName, Key: itemKey(markup.id) }));

    const [readThread, readMessage] = [
      await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey }),
      await call('GET', `/messages/${message.id}`, { key: org.workspaceKey }),
    ];

    expectProblem(readThread, 404);
    expectProblem(readMessage, 404);
    expect(readThread.body.detail).toContain(thread.id);
    expect(readMessage.body.detail).toContain(message.id);
    for (const answer of [readThread, readMessage]) expect(JSON.stringify(answer.body)).not.toContain(markup.id);
  });
});
