import { describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/events.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeMember } from '../support/members.js';
import { eventually } from '../support/polling.js';
import { makeTiff } from '../support/sample-files.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';
import { fileForm, pngBytes, postFileMarkup, postToStorage } from '../support/uploads.js';
import { verifyWithStandardWebhooks, type ReceivedRequest } from '../support/webhook-receiver.js';
import {
  arrivals,
  closeReceiversAfterEach,
  expectDelivered,
  FIRST_ATTEMPT_MS,
  outboxEvent,
  subscribe,
  subscribedOrganization,
  webhookIdOf,
} from '../support/webhook-pipeline.js';
import { createWebhookRegistration } from '../support/webhooks.js';

/**
 * Issue 12 "The event table": one test per event type of DESIGN "Which operation emits which
 * event", each performing the operation through the gateway and receiving its event through the
 * real pipeline (outbox -> stream pump -> fan-out -> queue -> worker -> loopback receiver).
 */

closeReceiversAfterEach();

describe('markup events through the pipeline', () => {
  it('markup_created by url: signed, webhook-id == body id == outbox id, the API user as actor', async () => {
    const org = await subscribedOrganization();
    const created = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://e.example/page', workspaceId: org.workspaceId },
    });
    expect(created.status).toBe(200);
    await expectDelivered(org, org, { type: 'markup_created', markupId: created.body.data.id, userId: org.workspaceKeyUserId });
  });

  it('markup_created from a file by a member: the image in data.markup.images, the member as actor', async () => {
    const org = await subscribedOrganization();
    const member = await makeMember(org.workspaceId, 'contributor');
    const created = await postFileMarkup(member.key, fileForm(await pngBytes(6, 4), 'shot.png', 'image/png'), {
      workspaceId: org.workspaceId,
    });
    expect(created.status).toBe(200);
    const { body } = await expectDelivered(org, org, { type: 'markup_created', markupId: created.body.data.id, userId: member.userId });
    expect(body.data.markup.images).toEqual([expect.objectContaining({ mimeType: 'image/png' })]);
  });

  // A conversion, then a delivery: 20 s in a full run on two loaded cores.
  it('markup_ready when a conversion finishes: the converted pages, the creator as actor', { timeout: 90_000 }, async () => {
    const org = await subscribedOrganization();
    const tiff = makeTiff([
      { width: 30, height: 20, rgb: [255, 0, 0] },
      { width: 12, height: 16, rgb: [0, 0, 255] },
    ]);
    const created = await postFileMarkup(org.workspaceKey, fileForm(tiff, 'scan.tiff', 'image/tiff'), { workspaceId: org.workspaceId });
    expect(created.status).toBe(200);
    const { body } = await expectDelivered(org, org, {
      type: 'markup_ready',
      markupId: created.body.data.id,
      userId: org.workspaceKeyUserId,
    });
    expect(body.data.markup).toMatchObject({ isReady: true, images: [expect.anything(), expect.anything()] });
  });

  it('set_project_read_only by an admin member: the member as actor, readOnly true', async () => {
    const org = await subscribedOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const admin = await makeMember(org.workspaceId, 'admin');
    const markup = await makeTypedMarkup(org, 'image');
    expect((await call('PATCH', `/markups/${markup.id}/read-only`, { key: admin.key, body: { readOnly: true } })).status).toBe(200);
    const { body } = await expectDelivered(org, org, { type: 'set_project_read_only', markupId: markup.id, userId: admin.userId });
    expect(body.data.markup).toMatchObject({
      readOnly: true,
      images: [expect.objectContaining({ url: expect.any(String) }), expect.anything()],
    });
  });

  it('markup_status_changed and project_review_created: no operation causes them, a registration subscribes to them', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey, {
      eventTypes: ['markup_status_changed', 'project_review_created'],
    });
    expect(registration.eventTypes).toEqual(['markup_status_changed', 'project_review_created']);
    const shown = await call('GET', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey });
    expect(shown.body.data.eventTypes).toEqual(['markup_status_changed', 'project_review_created']);
  });
});

describe('comment events through the pipeline', () => {
  async function threadFixture() {
    const org = await subscribedOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup);
    return { org, markup, thread, actor: org.workspaceKeyUserId };
  }

  it('comment_created: the thread and its first message', async () => {
    const { org, markup, thread, actor } = await threadFixture();
    await expectDelivered(org, org, {
      type: 'comment_created',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
      messageId: thread.messages[0].id,
    });
  });

  it('comment_reply_created: the reply by a member, the member as actor', async () => {
    const { org, markup, thread } = await threadFixture();
    const member = await makeMember(org.workspaceId, 'contributor');
    const message = await reply(member.key, thread.id);
    await expectDelivered(org, org, {
      type: 'comment_reply_created',
      markupId: markup.id,
      userId: member.userId,
      commentId: thread.id,
      messageId: message.id,
    });
  });

  it('comment_updated by a message edit: the edited message', async () => {
    const { org, markup, thread, actor } = await threadFixture();
    const message = await reply(org.workspaceKey, thread.id);
    expect((await call('PATCH', `/messages/${message.id}`, { key: org.workspaceKey, body: { content: 'Edited' } })).status).toBe(200);
    const { body } = await expectDelivered(org, org, {
      type: 'comment_updated',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
      messageId: message.id,
    });
    expect(body.data.message.content).toBe('Edited');
  });

  it('comment_updated by a pin move: the moved thread, no message', async () => {
    const { org, markup, thread, actor } = await threadFixture();
    expect(
      (
        await call('PATCH', `/threads/${thread.id}/move-pin`, {
          key: org.workspaceKey,
          body: { viewportXPercentage: 10, viewportYPercentage: 20 },
        })
      ).status,
    ).toBe(200);
    const { body } = await expectDelivered(org, org, { type: 'comment_updated', markupId: markup.id, userId: actor, commentId: thread.id });
    expect(body.data.comment).toMatchObject({ offsetXPercentage: 10, offsetYPercentage: 20 });
  });

  it('comment_resolved and comment_unresolved', async () => {
    const { org, markup, thread, actor } = await threadFixture();
    expect((await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey })).status).toBeLessThan(300);
    const resolved = await expectDelivered(org, org, {
      type: 'comment_resolved',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
    });
    expect(resolved.body.data.comment.resolved).toBe(true);
    expect((await call('POST', `/threads/${thread.id}/unresolve`, { key: org.workspaceKey })).status).toBeLessThan(300);
    await expectDelivered(org, org, { type: 'comment_unresolved', markupId: markup.id, userId: actor, commentId: thread.id });
  });

  // The conversion worker reads the screenshot; a full run queues it behind video and PDF conversions: a minute, under the test's 90 s.
  it('comment_screenshot_failed when a screenshot cannot be read: the thread author as actor', { timeout: 90_000 }, async () => {
    const org = await subscribedOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup);
    const bytes = Buffer.from('these bytes are not a PNG, whatever the type says');
    const key = org.workspaceKey;
    const policy = await call('GET', `/threads/${thread.id}/screenshot-upload-policy`, {
      key,
      query: { filename: 'screenshot.png', mimeType: 'image/png', filesize: bytes.length },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const posted = await postToStorage(policy.body.data.policy, bytes, { filename: 'screenshot.png' });
    expect(posted.status, posted.text).toBe(204);
    const attached = await call('PUT', `/threads/${thread.id}/screenshot`, {
      key,
      body: {
        fileId: String(policy.body.data.metadata.fileId),
        key: policy.body.data.key,
        etag: posted.etag,
        mimeType: 'image/png',
        filesize: bytes.length,
        width: 1200,
        height: 800,
      },
    });
    expect(attached.status, JSON.stringify(attached.body)).toBe(200);
    await expectDelivered(
      org,
      org,
      {
        type: 'comment_screenshot_failed',
        markupId: markup.id,
        userId: thread.user.id,
        commentId: thread.id,
      },
      60_000,
    );
  });
});

/** Creates a webpage markup by url through the gateway (one markup_created event) and answers its id. */
async function createUrlMarkup(org: { workspaceKey: string; workspaceId: string }, url = 'https://e.example/page'): Promise<string> {
  const created = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url, workspaceId: org.workspaceId } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.data.id;
}

/** The distinct webhook-ids received, in first-arrival order: delivery is at least once, so an id may repeat. */
const ids = (requests: ReceivedRequest[]) => [...new Set(requests.map(webhookIdOf))];

/** The delivery log of a registration through the API (first page, newest first). */
async function deliveryLog(
  org: { workspaceKey: string },
  registrationId: string,
): Promise<{ id: string; eventId: string; eventType: string; statusCode: number | null }[]> {
  const answer = await call('GET', `/webhook-registrations/${registrationId}/deliveries`, { key: org.workspaceKey });
  expect(answer.status).toBe(200);
  return answer.body.data.data;
}

describe('subscription rules through the pipeline', () => {
  it('one type only gets only that type; one without eventTypes gets every type, in the same workspace', async () => {
    const org = await subscribedOrganization();
    const only = await subscribe(org.workspaceKey, { eventTypes: ['comment_reply_created'] });
    const actor = org.workspaceKeyUserId;
    const markup = await makeTypedMarkup(org, 'image');
    const created = await expectDelivered(org, org, { type: 'markup_created', markupId: await createUrlMarkup(org), userId: actor });
    const thread = await createThread(org.workspaceKey, markup);
    const commented = await expectDelivered(org, org, {
      type: 'comment_created',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
      messageId: thread.messages[0].id,
    });
    const message = await reply(org.workspaceKey, thread.id);
    const replied = await expectDelivered(org, only, {
      type: 'comment_reply_created',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
      messageId: message.id,
    });
    await expectDelivered(org, org, {
      type: 'comment_reply_created',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
      messageId: message.id,
    });
    expect((await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey })).status).toBeLessThan(300);
    const resolved = await expectDelivered(org, org, {
      type: 'comment_resolved',
      markupId: markup.id,
      userId: actor,
      commentId: thread.id,
    });
    // The events on either side of the reply were fanned out to both registrations in the same enqueue as the every-type one's.
    expect(ids(org.receiver.requests)).toEqual([created.event.id, commented.event.id, replied.event.id, resolved.event.id]);
    expect(ids(only.receiver.requests)).toEqual([replied.event.id]);
  });

  it('a disabled registration gets nothing for events while disabled, nor after it is enabled again; another workspace gets nothing', async () => {
    const org = await subscribedOrganization();
    const disabled = await subscribe(org.workspaceKey, { enabled: false });
    const stranger = await subscribedOrganization();
    const whileDisabled = await createUrlMarkup(org, 'https://e.example/while-disabled');
    const missed = await expectDelivered(org, org, { type: 'markup_created', markupId: whileDisabled, userId: org.workspaceKeyUserId });
    expect(
      (await call('POST', `/webhook-registrations/${disabled.registration.id}`, { key: org.workspaceKey, body: { enabled: true } })).status,
    ).toBe(200);
    const afterwards = await createUrlMarkup(org, 'https://e.example/enabled');
    const received = await expectDelivered(org, disabled, { type: 'markup_created', markupId: afterwards, userId: org.workspaceKeyUserId });
    // The stranger's own event is the barrier: the pipeline got to it, and nothing of the other workspace came before or with it.
    const own = await createUrlMarkup(stranger);
    const barrier = await expectDelivered(stranger, stranger, {
      type: 'markup_created',
      markupId: own,
      userId: stranger.workspaceKeyUserId,
    });
    expect(ids(disabled.receiver.requests)).toEqual([received.event.id]);
    expect(ids(disabled.receiver.requests)).not.toContain(missed.event.id);
    expect(ids(stranger.receiver.requests)).toEqual([barrier.event.id]);
    const log = await eventually(
      () => deliveryLog(org, disabled.registration.id),
      (entries) => entries.length >= 1,
    );
    expect(log.map((entry) => entry.eventId)).toEqual([received.event.id]);
  });
});

describe('retries and redelivery through the pipeline', () => {
  it('500 then 200: the second attempt within 10 s, the same webhook-id and body, both signed', async () => {
    const org = await subscribedOrganization();
    org.receiver.script({ status: 500 });
    const markupId = await createUrlMarkup(org);
    const event = await outboxEvent(org.workspaceId, (found) => found.type === 'markup_created' && found.markupId === markupId);
    const [first, second] = await arrivals(org.receiver, (body) => body.id === event.id, 2, 2 * FIRST_ATTEMPT_MS + 2_000);
    expect(second, 'no second attempt').toBeDefined();
    expect(second!.at - first!.at).toBeLessThan(FIRST_ATTEMPT_MS);
    expect([webhookIdOf(first!), webhookIdOf(second!)]).toEqual([event.id, event.id]);
    expect(second!.body).toBe(first!.body);
    expect(first!.at - Date.parse(event.createdAt)).toBeLessThan(FIRST_ATTEMPT_MS);
    for (const request of [first!, second!]) verifyWithStandardWebhooks(org.registration.signingKey, request);
    const log = await eventually(
      () => deliveryLog(org, org.registration.id),
      (entries) => entries.length >= 2,
    );
    expect(log.map((entry) => [entry.eventId, entry.statusCode])).toEqual([
      [event.id, 200],
      [event.id, 500],
    ]);
  });

  it('redeliver after a delivery: the same webhook-id and body again, signed, and one more log entry; test sends a signed webhook.test', async () => {
    const org = await subscribedOrganization();
    const markupId = await createUrlMarkup(org);
    const { request, event } = await expectDelivered(org, org, { type: 'markup_created', markupId, userId: org.workspaceKeyUserId });
    const path = `/webhook-registrations/${org.registration.id}`;
    const log = await eventually(
      () => deliveryLog(org, org.registration.id),
      (entries) => entries.length === 1,
    );
    expect(log).toEqual([expect.objectContaining({ eventId: event.id, statusCode: 200 })]);

    expect((await call('POST', `${path}/deliveries/${log[0]!.id}/redeliver`, { key: org.workspaceKey })).status).toBe(202);
    const [, again] = await arrivals(org.receiver, (body) => body.id === event.id, 2);
    expect(again, 'no redelivery').toBeDefined();
    expect(webhookIdOf(again!)).toBe(event.id);
    expect(again!.body).toBe(request.body);
    verifyWithStandardWebhooks(org.registration.signingKey, again!);
    const grown = await eventually(
      () => deliveryLog(org, org.registration.id),
      (entries) => entries.length === 2,
    );
    expect(grown.map((entry) => [entry.eventId, entry.statusCode])).toEqual([
      [event.id, 200],
      [event.id, 200],
    ]);

    const sent = await call('POST', `${path}/test`, { key: org.workspaceKey });
    expect(sent.status).toBe(202);
    const [test] = await arrivals(org.receiver, (body) => body.id === sent.body.data.eventId);
    expect(test, 'no webhook.test').toBeDefined();
    expect(verifyWithStandardWebhooks(org.registration.signingKey, test!)).toMatchObject({
      type: 'webhook.test',
      workspaceId: org.workspaceId,
    });
    expect(webhookIdOf(test!)).toBe(sent.body.data.eventId);
    const logged = await eventually(
      () => deliveryLog(org, org.registration.id),
      (entries) => entries.length === 3,
    );
    expect(logged[0]).toMatchObject({ eventId: sent.body.data.eventId, eventType: 'webhook.test', statusCode: 200 });
  });
});

describe('exactly-once emission through the pipeline', () => {
  it('20 operations: exactly the 20 outbox event ids reach the receiver (repeats allowed, never an extra id)', async () => {
    const org = await subscribedOrganization();
    await setPlan(org.organizationId, { markupLimit: null });
    await Promise.all(Array.from({ length: 20 }, (_, index) => createUrlMarkup(org, `https://e.example/${index}`)));
    const events = await eventually(
      () => listEvents(org.workspaceId),
      (found) => found.length >= 20,
    );
    expect(events).toHaveLength(20);
    const delivered = await eventually(
      async () => new Set(ids(org.receiver.requests)),
      (found) => found.size >= 20,
      2 * FIRST_ATTEMPT_MS,
    );
    expect([...delivered].sort()).toEqual(events.map((event) => event.id).sort());
    for (const request of org.receiver.requests) verifyWithStandardWebhooks(org.registration.signingKey, request);
  });
});
