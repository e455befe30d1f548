import { describe, expect, it } from 'vitest';
import { getWebhookRegistration } from '../../shared/db/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../shared/schemas/webhooks.js';
import type { WebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { call, makeOrganization } from '../support/api.js';
import { makeMemberKey } from '../support/items.js';
import { forwardPages } from '../support/pages.js';
import { eventually } from '../support/polling.js';
import { expectProblem } from '../support/problems.js';
import { createWebhookRegistration, LOOPBACK_HOOK_URL } from '../support/webhooks.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

const MISSING = '00000000-0000-4000-8000-0000000000b0';
const SIGNING_KEY = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('POST /webhook-registrations (issue 12 item 1, spec "Webhook registration")', () => {
  it('creates a registration with the spec shape: every type when eventTypes is absent, enabled by default, a whsec_ key', async () => {
    const org = await makeOrganization();
    const created = await createWebhookRegistration(org.workspaceKey);

    expect(Object.keys(created).sort()).toEqual([
      'createdAt',
      'deletedAt',
      'enabled',
      'eventTypes',
      'id',
      'modifiedAt',
      'signingKey',
      'url',
      'workspaceId',
    ]);
    expect(created).toMatchObject({
      url: LOOPBACK_HOOK_URL,
      workspaceId: org.workspaceId,
      enabled: true,
      deletedAt: null,
      eventTypes: [...WEBHOOK_EVENT_TYPES],
    });
    expect(created.signingKey).toMatch(SIGNING_KEY);
    expect(Buffer.from(created.signingKey.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);
    expect(created.modifiedAt).toBe(created.createdAt);
    // Stored as "every type", so types added later reach it too.
    expect((await getWebhookRegistration(created.id))?.eventTypes).toBeNull();
  });

  it('keeps the listed event types without repeats, and enabled: false', async () => {
    const org = await makeOrganization();
    const created = await createWebhookRegistration(org.workspaceKey, {
      eventTypes: ['markup_ready', 'comment_created', 'markup_ready'],
      enabled: false,
    });
    expect(created).toMatchObject({ eventTypes: ['markup_ready', 'comment_created'], enabled: false });
    expect(created.signingKey).not.toBe((await createWebhookRegistration(org.workspaceKey)).signingKey);
  });

  it('takes an organization key naming workspaceId, and refuses one without it (400)', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    expect(await createWebhookRegistration(org.orgKey, { workspaceId: second.id })).toMatchObject({ workspaceId: second.id });
    expectProblem(await call('POST', '/webhook-registrations', { key: org.orgKey, body: { url: LOOPBACK_HOOK_URL } }), 400);
  });

  it('refuses bad urls, http to a non-loopback host, private literals and unknown event types, naming the field (400)', async () => {
    const org = await makeOrganization();
    const post = (body: Record<string, unknown>) => call('POST', '/webhook-registrations', { key: org.workspaceKey, body });
    expectProblem(await post({ url: 'not a url' }), 400, '/body/url');
    expectProblem(await post({ url: 'ftp://example.com/' }), 400, '/body/url');
    expectProblem(await post({ url: 'http://hooks.example.com/in' }), 400, '/body/url');
    expectProblem(await post({ url: 'https://10.1.2.3/in' }), 400, '/body/url');
    expectProblem(await post({ url: 'https://169.254.169.254/latest/meta-data' }), 400, '/body/url');
    expectProblem(await post({ url: `https://example.com/${'a'.repeat(2100)}` }), 400, '/body/url');
    expectProblem(await post({}), 400, '/body/url');
    expectProblem(await post({ url: LOOPBACK_HOOK_URL, eventTypes: ['markup_created', 'markup_exploded'] }), 400, '/body/eventTypes/1');
    expectProblem(await post({ url: LOOPBACK_HOOK_URL, eventTypes: 'markup_created' }), 400, '/body/eventTypes');
    expectProblem(await post({ url: LOOPBACK_HOOK_URL, enabled: 'yes' }), 400, '/body/enabled');
    expect((await call('GET', '/webhook-registrations', { key: org.workspaceKey })).body.data.data).toEqual([]);
  });

  it('refuses another workspace (403), viewers and contributors (403), and lets an admin member create', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    expectProblem(
      await call('POST', '/webhook-registrations', { key: org.workspaceKey, body: { url: LOOPBACK_HOOK_URL, workspaceId: second.id } }),
      403,
    );
    for (const role of ['viewer', 'contributor'] as const) {
      const key = await makeMemberKey(org.workspaceId, role);
      expectProblem(await call('POST', '/webhook-registrations', { key, body: { url: LOOPBACK_HOOK_URL } }), 403);
    }
    await createWebhookRegistration(await makeMemberKey(org.workspaceId, 'admin'));
  });
});

describe('GET, update, refresh-signing-key and DELETE /webhook-registrations/:id', () => {
  it('reads a registration; viewers, contributors and other workspaces are refused (403), unknown ids 404', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const created = await createWebhookRegistration(org.workspaceKey);
    const elsewhere = await createWebhookRegistration(org.orgKey, { workspaceId: second.id });

    const read = await call('GET', `/webhook-registrations/${created.id}`, { key: org.workspaceKey });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(created);
    expectProblem(await call('GET', `/webhook-registrations/${elsewhere.id}`, { key: org.workspaceKey }), 403);
    for (const role of ['viewer', 'contributor'] as const) {
      const key = await makeMemberKey(org.workspaceId, role);
      expectProblem(await call('GET', `/webhook-registrations/${created.id}`, { key }), 403);
      expectProblem(await call('GET', '/webhook-registrations', { key }), 403);
    }
    expectProblem(await call('GET', `/webhook-registrations/${MISSING}`, { key: org.workspaceKey }), 404);
    expectProblem(await call('GET', '/webhook-registrations/not-a-uuid', { key: org.workspaceKey }), 400, '/params/id');
  });

  it('updates url, eventTypes and enabled; absent fields stay; null eventTypes goes back to every type', async () => {
    const org = await makeOrganization();
    const created = await createWebhookRegistration(org.workspaceKey, { eventTypes: ['markup_created'] });
    const update = (body: Record<string, unknown>) => call('POST', `/webhook-registrations/${created.id}`, { key: org.workspaceKey, body });

    const disabled = await update({ enabled: false });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    expect(disabled.body.data).toMatchObject({
      enabled: false,
      eventTypes: ['markup_created'],
      url: LOOPBACK_HOOK_URL,
      signingKey: created.signingKey,
    });
    expect(disabled.body.data.modifiedAt > created.modifiedAt).toBe(true);

    const changed = await update({
      url: 'http://localhost:9/other',
      eventTypes: ['comment_resolved', 'comment_resolved', 'comment_unresolved'],
      enabled: true,
    });
    expect(changed.body.data).toMatchObject({
      url: 'http://localhost:9/other',
      eventTypes: ['comment_resolved', 'comment_unresolved'],
      enabled: true,
    });
    expect((await update({ eventTypes: null })).body.data.eventTypes).toEqual([...WEBHOOK_EVENT_TYPES]);
    expect((await call('GET', `/webhook-registrations/${created.id}`, { key: org.workspaceKey })).body.data).toMatchObject({
      url: 'http://localhost:9/other',
      enabled: true,
    });

    expectProblem(await update({ url: 'http://hooks.example.com/' }), 400, '/body/url');
    expectProblem(await update({ eventTypes: ['nope'] }), 400, '/body/eventTypes/0');
    expectProblem(await call('POST', `/webhook-registrations/${MISSING}`, { key: org.workspaceKey, body: { enabled: false } }), 404);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');
    expectProblem(await call('POST', `/webhook-registrations/${created.id}`, { key: viewer, body: { enabled: false } }), 403);
  });

  it('refresh-signing-key replaces the key (and nothing else); refused to contributors', async () => {
    const org = await makeOrganization();
    const created = await createWebhookRegistration(org.workspaceKey);
    const refreshed = await call('POST', `/webhook-registrations/${created.id}/refresh-signing-key`, { key: org.workspaceKey });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.data.signingKey).toMatch(SIGNING_KEY);
    expect(refreshed.body.data.signingKey).not.toBe(created.signingKey);
    expect({ ...refreshed.body.data, signingKey: created.signingKey, modifiedAt: created.modifiedAt }).toEqual(created);
    expect((await call('GET', `/webhook-registrations/${created.id}`, { key: org.workspaceKey })).body.data.signingKey).toBe(
      refreshed.body.data.signingKey,
    );
    const contributor = await makeMemberKey(org.workspaceId, 'contributor');
    expectProblem(await call('POST', `/webhook-registrations/${created.id}/refresh-signing-key`, { key: contributor }), 403);
    expectProblem(await call('POST', `/webhook-registrations/${MISSING}/refresh-signing-key`, { key: org.workspaceKey }), 404);
  });

  it('deletes (204), after which it is 404 everywhere and gone from the list', async () => {
    const org = await makeOrganization();
    const created = await createWebhookRegistration(org.workspaceKey);
    const contributor = await makeMemberKey(org.workspaceId, 'contributor');
    expectProblem(await call('DELETE', `/webhook-registrations/${created.id}`, { key: contributor }), 403);

    expect((await call('DELETE', `/webhook-registrations/${created.id}`, { key: org.workspaceKey })).status).toBe(204);
    expectProblem(await call('GET', `/webhook-registrations/${created.id}`, { key: org.workspaceKey }), 404);
    expectProblem(await call('POST', `/webhook-registrations/${created.id}`, { key: org.workspaceKey, body: { enabled: true } }), 404);
    expectProblem(await call('POST', `/webhook-registrations/${created.id}/refresh-signing-key`, { key: org.workspaceKey }), 404);
    expectProblem(await call('DELETE', `/webhook-registrations/${created.id}`, { key: org.workspaceKey }), 404);
    expect((await call('GET', '/webhook-registrations', { key: org.workspaceKey })).body.data.data).toEqual([]);
  });

  it('a delete racing an update never leaves the registration behind (20 runs)', async () => {
    const org = await makeOrganization();
    for (let run = 0; run < 20; run++) {
      const created = await createWebhookRegistration(org.workspaceKey);
      const [deleted, updated, deletedAgain] = await Promise.all([
        call('DELETE', `/webhook-registrations/${created.id}`, { key: org.workspaceKey }),
        call('POST', `/webhook-registrations/${created.id}`, { key: org.workspaceKey, body: { enabled: false } }),
        call('DELETE', `/webhook-registrations/${created.id}`, { key: org.workspaceKey }),
      ]);
      expect([deleted.status, deletedAgain.status].sort()).toEqual([204, 404]);
      expect([200, 404]).toContain(updated.status);
      expect(await getWebhookRegistration(created.id)).toBeUndefined();
    }
  });
});

describe('GET /webhook-registrations lists a workspace\'s registrations (DESIGN "Envelope", "Pagination")', () => {
  it('pages with limit and before=<nextCursor>, visiting each registration exactly once, newest first', async () => {
    const org = await makeOrganization();
    const created: WebhookRegistration[] = [];
    for (let i = 0; i < 7; i++) created.push(await createWebhookRegistration(org.workspaceKey));

    const pages = await forwardPages<WebhookRegistration>('/webhook-registrations', org.workspaceKey, { limit: 3 });

    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((registration) => registration.id)).toEqual(created.map((registration) => registration.id).reverse());
    expect(pages.flat()[0]).toEqual(created.at(-1));
  });

  it("answers an organization key for the workspace it names, never another workspace's; refuses bad input", async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const [mine, theirs] = await Promise.all([
      createWebhookRegistration(org.workspaceKey),
      createWebhookRegistration(org.orgKey, { workspaceId: second.id }),
    ]);

    expect(
      (await call('GET', '/webhook-registrations', { key: org.workspaceKey })).body.data.data.map((each: WebhookRegistration) => each.id),
    ).toEqual([mine.id]);
    expect(
      (await call('GET', '/webhook-registrations', { key: org.orgKey, query: { workspaceId: second.id } })).body.data.data.map(
        (each: WebhookRegistration) => each.id,
      ),
    ).toEqual([theirs.id]);
    expectProblem(await call('GET', '/webhook-registrations', { key: org.orgKey }), 400);
    expectProblem(await call('GET', '/webhook-registrations', { key: org.workspaceKey, query: { workspaceId: second.id } }), 403);
    expectProblem(await call('GET', '/webhook-registrations', { key: org.workspaceKey, query: { before: 'forged.cursor' } }), 400);
    expectProblem(await call('GET', '/webhook-registrations', { key: org.workspaceKey, query: { limit: 101 } }), 400, '/query/limit');
  });
});

describe('deleting a workspace removes its webhook registrations', () => {
  it('leaves none of the deleted workspace and keeps the others', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const doomed = await Promise.all([0, 1, 2].map(() => createWebhookRegistration(org.orgKey, { workspaceId: second.id })));
    const survivor = await createWebhookRegistration(org.workspaceKey);

    expect((await call('DELETE', '/workspace', { key: org.orgKey, query: { workspaceId: second.id } })).status).toBe(204);
    expectProblem(await call('GET', `/webhook-registrations/${doomed[0]!.id}`, { key: org.orgKey }), 404);
    const remaining = async () =>
      (await Promise.all(doomed.map((registration) => getWebhookRegistration(registration.id)))).filter(Boolean);
    expect(await eventually(remaining, (found) => found.length === 0)).toEqual([]);
    expect(await getWebhookRegistration(survivor.id)).toMatchObject({ id: survivor.id });
  });
});
