import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../shared/db/core/ids.js';
import { call, makeOrganization } from '../support/api.js';
import { endUserToken } from '../support/end-users.js';
import { makeMemberKey } from '../support/items.js';
import { forwardPages } from '../support/pages.js';
import { expectProblem } from '../support/problems.js';
import { recordAttempt } from '../support/webhook-deliveries.js';
import { createWebhookRegistration } from '../support/webhooks.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

const MISSING = '00000000-0000-4000-8000-0000000000b0';
const PUBLIC_FIELDS = ['attemptedAt', 'durationMs', 'error', 'eventId', 'eventType', 'id', 'nextRetryAt', 'statusCode'];

const deliveries = (key: string, id: string, query: Record<string, string | number> = {}) =>
  call('GET', `/webhook-registrations/${id}/deliveries`, { key, query });
const redeliver = (key: string, id: string, deliveryId: string) =>
  call('POST', `/webhook-registrations/${id}/deliveries/${deliveryId}/redeliver`, { key });
const sendTest = (key: string, id: string) => call('POST', `/webhook-registrations/${id}/test`, { key });

describe('GET /webhook-registrations/:id/deliveries (issue 12 item 5, extension)', () => {
  it("answers the log newest first with exactly the public fields of each attempt, and only this registration's", async () => {
    const org = await makeOrganization();
    const [registration, other] = await Promise.all([
      createWebhookRegistration(org.workspaceKey),
      createWebhookRegistration(org.workspaceKey),
    ]);
    const start = Date.now() - 60_000;
    const failed = await recordAttempt(registration, start);
    const timedOut = await recordAttempt(registration, start + 1000, { statusCode: null, error: 'timeout after 15 s', durationMs: 15_000 });
    const delivered = await recordAttempt(registration, start + 2000, { statusCode: 204, nextRetryAt: null, attempt: 2 });
    await recordAttempt(other, start + 3000);

    const response = await deliveries(org.workspaceKey, registration.id);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(['data', 'hasMore', 'nextCursor']);
    expect(response.body.data).toMatchObject({ hasMore: false, nextCursor: null });
    const entries = response.body.data.data as Record<string, unknown>[];
    expect(entries.map((entry) => entry.id)).toEqual([delivered.id, timedOut.id, failed.id]);
    for (const entry of entries) expect(Object.keys(entry).sort()).toEqual(PUBLIC_FIELDS);
    expect(entries[0]).toEqual({
      id: delivered.id,
      eventId: delivered.eventId,
      eventType: 'markup_created',
      attemptedAt: delivered.attemptedAt,
      statusCode: 204,
      error: null,
      durationMs: 42,
      nextRetryAt: null,
    });
    expect(entries[1]).toMatchObject({
      statusCode: null,
      error: 'timeout after 15 s',
      durationMs: 15_000,
      nextRetryAt: timedOut.nextRetryAt,
    });
  });

  it('answers an empty page for a registration nothing was delivered to', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey);
    const response = await deliveries(org.orgKey, registration.id);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toEqual({ data: [], hasMore: false, nextCursor: null });
  });

  it('pages with limit and before=<nextCursor>, visiting each entry exactly once, newest first', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey);
    const start = Date.now() - 60_000;
    const written = await Promise.all(Array.from({ length: 7 }, (_, index) => recordAttempt(registration, start + index * 10)));

    const pages = await forwardPages<{ id: string }>(`/webhook-registrations/${registration.id}/deliveries`, org.workspaceKey, {
      limit: 3,
    });
    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((entry) => entry.id)).toEqual(written.map((entry) => entry.id).reverse());
    const first = await deliveries(org.workspaceKey, registration.id);
    expect(first.body.data.data).toHaveLength(7);
  });

  it("refuses a bad limit or before naming the field, and a cursor of another registration's log (400)", async () => {
    const org = await makeOrganization();
    const [registration, other] = await Promise.all([
      createWebhookRegistration(org.workspaceKey),
      createWebhookRegistration(org.workspaceKey),
    ]);
    await Promise.all([0, 1].map((index) => recordAttempt(other, Date.now() - 1000 + index)));
    const otherCursor = (await deliveries(org.workspaceKey, other.id, { limit: 1 })).body.data.nextCursor as string;
    expect(otherCursor).toEqual(expect.any(String));

    for (const limit of ['0', '101', 'x', '1.5', '-1'])
      expectProblem(await deliveries(org.workspaceKey, registration.id, { limit }), 400, '/query/limit');
    expectProblem(await deliveries(org.workspaceKey, registration.id, { before: 'forged.cursor' }), 400);
    expectProblem(await deliveries(org.workspaceKey, registration.id, { before: 'x'.repeat(2049) }), 400, '/query/before');
    expectProblem(await deliveries(org.workspaceKey, registration.id, { before: otherCursor }), 400);
  });

  it("answers 404 for an unknown registration, 403 for another workspace's (as the registration routes), 400 for a malformed id", async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const elsewhere = await createWebhookRegistration(org.orgKey, { workspaceId: second.id });
    const outsider = await makeOrganization();

    expectProblem(await deliveries(org.workspaceKey, MISSING), 404);
    expectProblem(await deliveries(org.workspaceKey, elsewhere.id), 403);
    expectProblem(await deliveries(outsider.orgKey, elsewhere.id), 403);
    expectProblem(await deliveries(org.workspaceKey, 'not-a-uuid'), 400, '/params/id');
  });
});

describe('POST /webhook-registrations/:id/deliveries/:deliveryId/redeliver (issue 12 item 5, extension)', () => {
  it('queues one more attempt of the entry and answers 202 with its event', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey);
    const entry = await recordAttempt(registration, Date.now() - 1000, { statusCode: 503, attempt: 8, nextRetryAt: null });

    const response = await redeliver(org.workspaceKey, registration.id, entry.id);
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect(response.body).toEqual({ data: { eventId: entry.eventId, eventType: 'markup_created' } });
    // An organization key reaches it too.
    expect((await redeliver(org.orgKey, registration.id, entry.id)).status).toBe(202);
  });

  it('answers 404 for an unknown entry, one of another registration, or an unknown registration; 400 for malformed ids', async () => {
    const org = await makeOrganization();
    const [registration, other] = await Promise.all([
      createWebhookRegistration(org.workspaceKey),
      createWebhookRegistration(org.workspaceKey),
    ]);
    const foreign = await recordAttempt(other, Date.now() - 1000);
    const own = await recordAttempt(registration, Date.now() - 1000);

    expectProblem(await redeliver(org.workspaceKey, registration.id, timeOrderedId()), 404);
    expectProblem(await redeliver(org.workspaceKey, registration.id, MISSING), 404);
    expectProblem(await redeliver(org.workspaceKey, registration.id, foreign.id), 404);
    expectProblem(await redeliver(org.workspaceKey, MISSING, own.id), 404);
    expectProblem(await redeliver(org.workspaceKey, registration.id, 'not-a-uuid'), 400, '/params/deliveryId');
    expectProblem(await redeliver(org.workspaceKey, 'not-a-uuid', own.id), 400, '/params/id');
  });

  it('answers 409 while the registration is disabled, and 202 again once it is enabled', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey, { enabled: false });
    const entry = await recordAttempt(registration, Date.now() - 1000);

    const refused = await redeliver(org.workspaceKey, registration.id, entry.id);
    expectProblem(refused, 409);
    expect(refused.body.detail).toContain('disabled');
    expect(
      (await call('POST', `/webhook-registrations/${registration.id}`, { key: org.workspaceKey, body: { enabled: true } })).status,
    ).toBe(200);
    expect((await redeliver(org.workspaceKey, registration.id, entry.id)).status).toBe(202);
  });
});

describe('POST /webhook-registrations/:id/test (issue 12 item 5, extension)', () => {
  it('queues a new webhook.test event and answers 202 with its id, a new one each call', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey, { eventTypes: ['markup_ready'] });

    const first = await sendTest(org.workspaceKey, registration.id);
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body).toEqual({ data: { eventId: expect.stringMatching(/^[0-9a-f-]{36}$/), eventType: 'webhook.test' } });
    const second = await sendTest(org.orgKey, registration.id);
    expect(second.status).toBe(202);
    expect(second.body.data.eventId).not.toBe(first.body.data.eventId);
  });

  it("answers 404 for an unknown registration, 403 for another workspace's, 400 for a malformed id, 409 when disabled", async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const elsewhere = await createWebhookRegistration(org.orgKey, { workspaceId: second.id });
    const disabled = await createWebhookRegistration(org.workspaceKey, { enabled: false });

    expectProblem(await sendTest(org.workspaceKey, MISSING), 404);
    expectProblem(await sendTest(org.workspaceKey, elsewhere.id), 403);
    expectProblem(await sendTest(org.workspaceKey, 'not-a-uuid'), 400, '/params/id');
    expectProblem(await sendTest(org.workspaceKey, disabled.id), 409);
  });
});

describe('delivery-log roles (webhook:read and webhook:manage: admins and owners)', () => {
  it('refuses viewers, contributors and end users (403); admins read, redeliver and test', async () => {
    const org = await makeOrganization();
    const registration = await createWebhookRegistration(org.workspaceKey);
    const entry = await recordAttempt(registration, Date.now() - 1000);

    for (const role of ['viewer', 'contributor'] as const) {
      const key = await makeMemberKey(org.workspaceId, role);
      expectProblem(await deliveries(key, registration.id), 403);
      expectProblem(await redeliver(key, registration.id, entry.id), 403);
      expectProblem(await sendTest(key, registration.id), 403);
    }
    const endUser = await endUserToken({ organizationId: org.organizationId, workspaceId: org.workspaceId, markupRole: 'project:owner' });
    expectProblem(await deliveries(endUser, registration.id), 403);
    expectProblem(await redeliver(endUser, registration.id, entry.id), 403);
    expectProblem(await sendTest(endUser, registration.id), 403);

    const admin = await makeMemberKey(org.workspaceId, 'admin');
    expect((await deliveries(admin, registration.id)).status).toBe(200);
    expect((await redeliver(admin, registration.id, entry.id)).status).toBe(202);
    expect((await sendTest(admin, registration.id)).status).toBe(202);
  });
});
