import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV, resetConfig } from '../../shared/config.js';
import { listEvents, type EventRecord } from '../../shared/db/events.js';
import { getExternalUser } from '../../shared/db/external-users.js';
import { buildEventEnvelope, eventBody } from '../../shared/domain/webhooks/events.js';
import { call, localStack, makeOrganization, type Org } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeEndUser } from '../support/end-users.js';
import { makeExternalUser } from '../support/external-users.js';
import { makeMember } from '../support/members.js';
import { eventually } from '../support/polling.js';
import { makeTiff } from '../support/sample-files.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';
import { fileForm, pngBytes, postFileMarkup } from '../support/uploads.js';

/** The webhook body of every event of DESIGN.md "Which operation emits which event" (issue 12 item 3). */

beforeAll(() => {
  // Links outside a request point at APP_URL, the gateway's origin as the local stack sets it (this
  // process builds envelopes itself).
  process.env[ENV.appUrl] = localStack().stack.baseUrl;
  resetConfig();
});

async function eventOf(org: Pick<Org, 'workspaceId'>, match: (event: EventRecord) => boolean): Promise<EventRecord> {
  const events = await eventually(
    () => listEvents(org.workspaceId),
    (found) => found.some(match),
    30_000,
  );
  const event = events.find(match);
  if (!event) throw new Error(`no such event among ${JSON.stringify(events.map((found) => found.type))}`);
  return event;
}

const bodyOf = async (event: EventRecord) => JSON.parse(await eventBody(event));

/** Presigned URLs differ per signing (date, signature): compare them by their path. */
function unsigned(value: unknown): unknown {
  if (typeof value === 'string' && value.includes('X-Amz-Signature=')) return value.split('?')[0];
  if (Array.isArray(value)) return value.map(unsigned);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, unsigned(inner)]));
  return value;
}

async function markupAsRead(key: string, markupId: string) {
  const read = await call('GET', `/markups/${markupId}`, { key });
  expect(read.status).toBe(200);
  return read.body.data;
}

async function threadAsRead(key: string, threadId: string) {
  const read = await call('GET', `/threads/${threadId}`, { key });
  expect(read.status).toBe(200);
  return read.body.data;
}

function expectEnvelope(body: any, event: EventRecord) {
  expect(Object.keys(body).sort()).toEqual(['createdAt', 'data', 'id', 'type', 'workspaceId']);
  expect(body).toMatchObject({ id: event.id, type: event.type, workspaceId: event.workspaceId, createdAt: event.createdAt });
}

describe('markup events: data.markup is GET /markups/:id, data.user the actor', () => {
  it('markup_created by url (workspace key): envelope, the markup as read, the API user; the same bytes after a rename', async () => {
    const org = await makeOrganization();
    const created = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://e.example/page', workspaceId: org.workspaceId },
    });
    expect(created.status).toBe(200);
    // The body is the markup as read when it is built: wait for the renderer to settle the page's
    // screenshots (unavailable here: the host does not resolve), so the read after it is the same.
    await eventually(
      () => markupAsRead(org.workspaceKey, created.body.data.id),
      (markup: { pageScreenshots?: { state: string }[] }) =>
        markup.pageScreenshots?.every((screenshot) => screenshot.state !== 'pending') ?? false,
      60_000,
    );
    const event = await eventOf(org, (found) => found.type === 'markup_created');
    const first = await eventBody(event);
    const body = JSON.parse(first);
    expectEnvelope(body, event);
    expect(Object.keys(body.data).sort()).toEqual(['markup', 'user']);
    expect(unsigned(body.data.markup)).toEqual(unsigned(await markupAsRead(org.workspaceKey, created.body.data.id)));
    expect(body.data.user).toMatchObject({
      id: org.workspaceKeyUserId,
      guest: false,
      name: expect.any(String),
      createdAt: expect.any(Number),
    });

    expect((await call('POST', `/markups/${created.body.data.id}`, { key: org.workspaceKey, body: { name: 'Renamed' } })).status).toBe(200);
    expect(await eventBody(event)).toBe(first);
    expect((await buildEventEnvelope(event)).data.markup).toMatchObject({ name: 'Renamed' });
  });

  it('markup_created from a file by a member: images present, the member as user', async () => {
    const org = await makeOrganization();
    const member = await makeMember(org.workspaceId, 'contributor');
    const created = await postFileMarkup(member.key, fileForm(await pngBytes(6, 4), 'shot.png', 'image/png'), {
      workspaceId: org.workspaceId,
    });
    expect(created.status).toBe(200);
    const body = await bodyOf(await eventOf(org, (found) => found.type === 'markup_created'));
    expect(body.data.markup.images).toEqual([
      expect.objectContaining({ mimeType: 'image/png', url: expect.any(String), filesize: expect.any(Number) }),
    ]);
    expect(unsigned(body.data.markup)).toEqual(unsigned(await markupAsRead(org.workspaceKey, created.body.data.id)));
    expect(body.data.user).toMatchObject({ id: member.userId, guest: false });
  });

  it('markup_ready after a conversion (no principal): the converted images, and the creator as user', async () => {
    const org = await makeOrganization();
    const tiff = makeTiff([
      { width: 30, height: 20, rgb: [255, 0, 0] },
      { width: 12, height: 16, rgb: [0, 0, 255] },
    ]);
    const created = await postFileMarkup(org.workspaceKey, fileForm(tiff, 'scan.tiff', 'image/tiff'), { workspaceId: org.workspaceId });
    expect(created.status).toBe(200);
    const event = await eventOf(org, (found) => found.type === 'markup_ready');
    expect(event.userId).toBeUndefined();
    const body = await bodyOf(event);
    expect(body.data.markup).toMatchObject({ id: created.body.data.id, isReady: true });
    expect(body.data.markup.images).toHaveLength(2);
    expect(unsigned(body.data.markup)).toEqual(unsigned(await markupAsRead(org.workspaceKey, created.body.data.id)));
    expect(body.data.user).toMatchObject({ id: org.workspaceKeyUserId });
  });

  it('set_project_read_only by an admin member key: the member as user, readOnly true in the markup', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const admin = await makeMember(org.workspaceId, 'admin');
    const markup = await makeTypedMarkup(org, 'webpage');
    expect((await call('PATCH', `/markups/${markup.id}/read-only`, { key: admin.key, body: { readOnly: true } })).status).toBe(200);
    const body = await bodyOf(await eventOf(org, (found) => found.type === 'set_project_read_only'));
    expect(body.data.markup).toMatchObject({ id: markup.id, readOnly: true });
    expect(unsigned(body.data.markup)).toEqual(unsigned(await markupAsRead(org.workspaceKey, markup.id)));
    expect(body.data.user).toMatchObject({ id: admin.userId, guest: false });
  });
});

describe('comment events: data.comment is GET /threads/:id, data.message the message as the thread lists it', () => {
  it('comment_created, comment_reply_created, comment_updated (edit, pin move), comment_resolved, comment_unresolved', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const key = org.workspaceKey;
    const expectComment = async (match: (event: EventRecord) => boolean, threadId: string, messageId?: string) => {
      const event = await eventOf(org, match);
      const body = await bodyOf(event);
      expectEnvelope(body, event);
      const thread = await threadAsRead(key, threadId);
      expect(event.userId).toBe(org.workspaceKeyUserId);
      expect(unsigned(body.data.comment)).toEqual(unsigned(thread));
      expect(body.data.user).toEqual(thread.user);
      expect(unsigned(body.data.markup)).toEqual(unsigned(await markupAsRead(key, markup.id)));
      if (messageId) expect(body.data.message).toEqual(thread.messages.find((message: { id: string }) => message.id === messageId));
      else expect(body.data).not.toHaveProperty('message');
      return event;
    };
    const thread = await createThread(key, markup);
    await expectComment((event) => event.type === 'comment_created', thread.id, thread.messages[0].id);
    const message = await reply(key, thread.id);
    await expectComment((event) => event.type === 'comment_reply_created', thread.id, message.id);
    expect((await call('PATCH', `/messages/${message.id}`, { key, body: { content: 'Edited' } })).status).toBe(200);
    const edited = await expectComment(
      (event) => event.type === 'comment_updated' && event.messageId === message.id,
      thread.id,
      message.id,
    );
    expect((await bodyOf(edited)).data.message.content).toBe('Edited');
    expect(
      (await call('PATCH', `/threads/${thread.id}/move-pin`, { key, body: { viewportXPercentage: 10, viewportYPercentage: 20 } })).status,
    ).toBe(200);
    const moved = await expectComment((event) => event.type === 'comment_updated' && !event.messageId, thread.id);
    expect((await bodyOf(moved)).data.comment).toMatchObject({ offsetXPercentage: 10, offsetYPercentage: 20 });
    await call('POST', `/threads/${thread.id}/resolve`, { key });
    const resolved = await expectComment((event) => event.type === 'comment_resolved', thread.id);
    expect((await bodyOf(resolved)).data.comment.resolved).toBe(true);
    await call('POST', `/threads/${thread.id}/unresolve`, { key });
    await expectComment((event) => event.type === 'comment_unresolved', thread.id);
  });

  it('an end user through an exchange token is the user (a guest); a member replying is the user of the reply', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const external = await makeExternalUser(org.workspaceKey, { name: 'Erin Customer' });
    const stored = await getExternalUser(org.workspaceId, external.externalId);
    const endUser = await makeEndUser({
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      userId: stored!.userId,
      externalId: external.externalId,
    });
    const thread = await createThread(endUser.token, markup);
    const created = await bodyOf(await eventOf(org, (event) => event.type === 'comment_created'));
    expect(created.data.user).toMatchObject({ id: endUser.userId, name: 'Erin Customer', guest: true });
    expect(created.data.user).toEqual((await threadAsRead(org.workspaceKey, thread.id)).user);
    expect(created.data.comment.user).toEqual(created.data.user);
    const member = await makeMember(org.workspaceId, 'contributor');
    const message = await reply(member.key, thread.id);
    const replied = await bodyOf(await eventOf(org, (event) => event.type === 'comment_reply_created'));
    expect(replied.data.user).toMatchObject({ id: member.userId, guest: false });
    expect(replied.data.message).toMatchObject({ id: message.id, user: replied.data.user });
  });

  it('comment_screenshot_failed (no principal): the thread author is the user', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const event: EventRecord = {
      id: randomUUID(),
      type: 'comment_screenshot_failed',
      workspaceId: org.workspaceId,
      markupId: markup.id,
      threadId: thread.id,
      createdAt: new Date().toISOString(),
    };
    const body = await bodyOf(event);
    expect(body.data.user).toEqual(thread.user);
    expect(body.data.comment).toMatchObject({ id: thread.id });
    expect(body.data).not.toHaveProperty('message');
  });
});

describe('records gone before the first delivery, the test event, racing builders', () => {
  it('a deleted markup: markup, comment and message are null, the actor still named, nothing thrown', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    await createThread(org.workspaceKey, markup);
    const event = await eventOf(org, (found) => found.type === 'comment_created');
    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(204);
    const body = await bodyOf(event);
    expect(body.data).toEqual({
      markup: null,
      user: expect.objectContaining({ id: org.workspaceKeyUserId }),
      comment: null,
      message: null,
    });
  });

  it('a deleted thread under a live markup: comment null, the markup still there', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const event = await eventOf(org, (found) => found.type === 'comment_created');
    expect((await call('DELETE', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(204);
    const body = await bodyOf(event);
    expect(body.data).toMatchObject({ markup: { id: markup.id }, comment: null, message: null });
  });

  it('webhook.test: no markup, the caller as user', async () => {
    const org = await makeOrganization();
    const event = {
      id: randomUUID(),
      type: 'webhook.test' as const,
      workspaceId: org.workspaceId,
      userId: org.workspaceKeyUserId,
      createdAt: new Date().toISOString(),
    };
    const body = await bodyOf(event as unknown as EventRecord);
    expect(body).toMatchObject({ id: event.id, type: 'webhook.test', data: { markup: null, user: { id: org.workspaceKeyUserId } } });
  });

  it('two first deliveries racing a rename get the same bytes, and so does every later one (20 races)', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: null });
    const bulk = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: Array.from({ length: 20 }, (_, i) => ({ url: `https://e.example/${i}` })) },
    });
    expect(bulk.status).toBe(204);
    const events = await eventually(
      () => listEvents(org.workspaceId),
      (found) => found.length >= 20,
      10_000,
    );
    expect(events).toHaveLength(20);
    for (const event of events) {
      const [one, other] = await Promise.all([
        eventBody(event),
        eventBody(event),
        call('POST', `/markups/${event.markupId}`, { key: org.workspaceKey, body: { name: `Renamed ${event.id}` } }),
      ]);
      expect(other).toBe(one);
      expect(await eventBody(event)).toBe(one);
    }
  });
});
