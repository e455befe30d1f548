import { describe, expect, it } from 'vitest';
import { getOriginal } from '../../shared/db/originals.js';
import { addStoredBytes } from '../../shared/db/storage.js';
import { call, makeOrganization } from '../support/api.js';
import { makeRetainedOriginal, setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { waitForOriginalBytes } from '../support/workspaces.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WORKSPACE_FIELDS = ['archiveFolderId', 'id', 'name', 'rootFolderId', 'slug'];

describe('GET /workspace', () => {
  it("returns the workspace key's workspace with exactly the spec's fields", async () => {
    const org = await makeOrganization('Acme Design');

    const response = await call('GET', '/workspace', { key: org.workspaceKey });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(WORKSPACE_FIELDS);
    expect(response.body.data).toMatchObject({ id: org.workspaceId, name: 'Acme Design', slug: 'acme-design' });
    expect(response.body.data.rootFolderId).not.toBe(response.body.data.archiveFolderId);
  });

  it("answers an organization key without workspaceId with the organization's default workspace", async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspace', { key: org.orgKey });

    expect(response.status).toBe(200);
    expect(response.body.data.id).toBe(org.workspaceId);
  });

  it('answers an organization key with the workspace it names', async () => {
    const org = await makeOrganization();
    const second = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Second' } });

    const response = await call('GET', '/workspace', { key: org.orgKey, query: { workspaceId: second.body.data.id } });

    expect(response.status).toBe(200);
    expect(response.body.data.name).toBe('Second');
  });

  it('refuses a workspace key naming another workspace with 403', async () => {
    const org = await makeOrganization();
    const other = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Other' } });

    const response = await call('GET', '/workspace', { key: org.workspaceKey, query: { workspaceId: other.body.data.id } });

    expect(response.status).toBe(403);
  });

  it("refuses an organization key naming another organization's workspace with 403", async () => {
    const [a, b] = await Promise.all([makeOrganization(), makeOrganization()]);

    const response = await call('GET', '/workspace', { key: a.orgKey, query: { workspaceId: b.workspaceId } });

    expect(response.status).toBe(403);
  });

  it('answers 404 for a workspace that does not exist and 400 for an id that is not a UUID', async () => {
    const org = await makeOrganization();

    const missing = await call('GET', '/workspace', { key: org.orgKey, query: { workspaceId: missingId } });
    const malformed = await call('GET', '/workspace', { key: org.orgKey, query: { workspaceId: 'nope' } });

    expect(missing.status).toBe(404);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].pointer).toBe('/query/workspaceId');
  });
});

describe('POST /workspace (Authentication rule 3: organization keys only)', () => {
  it('creates a workspace with its own root and archive folders and answers 201', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/workspace', { key: org.orgKey, body: { name: '  Marketing Site  ' } });

    expect(response.status).toBe(201);
    expect(Object.keys(response.body.data).sort()).toEqual(WORKSPACE_FIELDS);
    expect(response.body.data).toMatchObject({ name: 'Marketing Site', slug: 'marketing-site' });
  });

  it('gives workspaces with the same name distinct slugs', async () => {
    const org = await makeOrganization();

    const first = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Café Plans' } });
    const second = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Café Plans' } });

    expect(first.body.data.slug).toBe('cafe-plans');
    expect(second.body.data.slug).toBe('cafe-plans-2');
  });

  it('refuses a workspace-scoped key with 403', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/workspace', { key: org.workspaceKey, body: { name: 'Nope' } });

    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers 400 naming the field when name is missing, empty or not a string', async () => {
    const org = await makeOrganization();

    const missing = await call('POST', '/workspace', { key: org.orgKey, body: {} });
    const empty = await call('POST', '/workspace', { key: org.orgKey, body: { name: '   ' } });
    const wrongType = await call('POST', '/workspace', { key: org.orgKey, body: { name: 42 } });

    for (const response of [missing, empty, wrongType]) {
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([expect.objectContaining({ pointer: '/body/name' })]);
    }
  });
});

describe('GET /workspaces (Workspaces rule 1: name ascending, 50 a page)', () => {
  it('refuses a workspace-scoped key with 403', async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspaces', { key: org.workspaceKey });

    expect(response.status).toBe(403);
  });

  it('lists by name ascending (case-insensitive) by default, and descending with dir=desc', async () => {
    const org = await makeOrganization('mango');
    for (const name of ['banana', 'Cherry', 'apple']) await call('POST', '/workspace', { key: org.orgKey, body: { name } });

    const ascending = await call('GET', '/workspaces', { key: org.orgKey });
    const descending = await call('GET', '/workspaces', { key: org.orgKey, query: { dir: 'desc' } });

    expect(ascending.status).toBe(200);
    expect(ascending.body.data.data.map((w: { name: string }) => w.name)).toEqual(['apple', 'banana', 'Cherry', 'mango']);
    expect(descending.body.data.data.map((w: { name: string }) => w.name)).toEqual(['mango', 'Cherry', 'banana', 'apple']);
    expect(ascending.body.data).toMatchObject({ hasMore: false, nextCursor: null, prevCursor: null });
  });

  it('orders by last activity (a rename counts), most recent first by default', async () => {
    const org = await makeOrganization('first');
    const second = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'second' } });
    await call('POST', '/workspace', { key: org.orgKey, body: { name: 'third' } });
    await call('PATCH', '/workspace', { key: org.orgKey, body: { workspaceId: second.body.data.id, name: 'second renamed' } });

    const byActivity = await call('GET', '/workspaces', { key: org.orgKey, query: { sortBy: 'lastActivity' } });
    const oldestFirst = await call('GET', '/workspaces', { key: org.orgKey, query: { sortBy: 'lastActivity', dir: 'asc' } });

    expect(byActivity.body.data.data.map((w: { name: string }) => w.name)).toEqual(['second renamed', 'third', 'first']);
    expect(oldestFirst.body.data.data.map((w: { name: string }) => w.name)).toEqual(['first', 'third', 'second renamed']);
  });

  it('pages 50 at a time and following nextCursor visits every workspace exactly once', async () => {
    const org = await makeOrganization('ws-000');
    for (let i = 1; i < 57; i += 1) {
      await call('POST', '/workspace', { key: org.orgKey, body: { name: `ws-${String(i).padStart(3, '0')}` } });
    }

    const first = await call('GET', '/workspaces', { key: org.orgKey });
    const seen: string[] = first.body.data.data.map((w: { name: string }) => w.name);
    let cursor = first.body.data.nextCursor as string | null;
    const small: string[] = [];
    let page = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 7 } });
    small.push(...page.body.data.data.map((w: { name: string }) => w.name));
    while (page.body.data.nextCursor) {
      page = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 7, before: page.body.data.nextCursor } });
      small.push(...page.body.data.data.map((w: { name: string }) => w.name));
    }
    const rest = await call('GET', '/workspaces', { key: org.orgKey, query: { before: cursor! } });

    expect(first.body.data.data).toHaveLength(50);
    expect(first.body.data.hasMore).toBe(true);
    expect(rest.body.data.data).toHaveLength(7);
    expect(rest.body.data).toMatchObject({ hasMore: false, nextCursor: null });
    expect([...seen, ...rest.body.data.data.map((w: { name: string }) => w.name)]).toEqual(small);
    expect(new Set(small).size).toBe(57);
    expect(small).toEqual([...small].sort());
    cursor = rest.body.data.prevCursor;
    const back = await call('GET', '/workspaces', { key: org.orgKey, query: { since: cursor! } });
    expect(back.body.data.data.map((w: { name: string }) => w.name)).toEqual(seen);
    expect(back.body.data.prevCursor).toBeNull();
  });

  it('steps back one page with since=<prevCursor>', async () => {
    const org = await makeOrganization('p-0');
    for (let i = 1; i < 6; i += 1) await call('POST', '/workspace', { key: org.orgKey, body: { name: `p-${i}` } });

    const one = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 2 } });
    const two = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 2, before: one.body.data.nextCursor } });
    const three = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 2, before: two.body.data.nextCursor } });
    const backToTwo = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 2, since: three.body.data.prevCursor } });

    expect(two.body.data.data.map((w: { name: string }) => w.name)).toEqual(['p-2', 'p-3']);
    expect(three.body.data.data.map((w: { name: string }) => w.name)).toEqual(['p-4', 'p-5']);
    expect(three.body.data.hasMore).toBe(false);
    expect(backToTwo.body.data.data).toEqual(two.body.data.data);
    expect(backToTwo.body.data.prevCursor).not.toBeNull();
  });

  it('answers 400 for a tampered cursor, a cursor of another order, or another organization', async () => {
    const [org, other] = await Promise.all([makeOrganization('c-1'), makeOrganization('d-1')]);
    for (const key of [org.orgKey, other.orgKey]) await call('POST', '/workspace', { key, body: { name: 'c-2' } });
    const page = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 1 } });
    const cursor = page.body.data.nextCursor as string;
    const [payload, signature] = cursor.split('.');
    const forged = `${Buffer.from(Buffer.from(payload!, 'base64url').toString().replace('c-1', 'c-0')).toString('base64url')}.${signature}`;

    const tampered = await call('GET', '/workspaces', { key: org.orgKey, query: { before: forged } });
    const garbage = await call('GET', '/workspaces', { key: org.orgKey, query: { before: 'not-a-cursor' } });
    const otherOrder = await call('GET', '/workspaces', { key: org.orgKey, query: { before: cursor, dir: 'desc' } });
    const otherOrg = await call('GET', '/workspaces', { key: other.orgKey, query: { before: cursor } });
    const both = await call('GET', '/workspaces', { key: org.orgKey, query: { before: cursor, since: cursor } });

    for (const response of [tampered, garbage, otherOrder, otherOrg, both]) expect(response.status).toBe(400);
  });

  it('answers 400 for a bad limit, sortBy or dir', async () => {
    const org = await makeOrganization();

    for (const query of [{ limit: 0 }, { limit: 101 }, { limit: 'ten' }, { sortBy: 'size' }, { dir: 'up' }]) {
      const response = await call('GET', '/workspaces', { key: org.orgKey, query });
      expect(response.status, JSON.stringify(query)).toBe(400);
    }
  });
});

describe('PATCH /workspace', () => {
  it('renames the workspace and changes its slug', async () => {
    const org = await makeOrganization();

    const response = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { name: 'Renamed', slug: 'renamed-ws' } });
    const read = await call('GET', '/workspace', { key: org.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: org.workspaceId, name: 'Renamed', slug: 'renamed-ws' });
    expect(read.body.data).toEqual(response.body.data);
  });

  it('answers 400 when neither name nor slug is given, or the slug is malformed', async () => {
    const org = await makeOrganization();

    const neither = await call('PATCH', '/workspace', { key: org.workspaceKey, body: {} });
    const badSlug = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { slug: 'Not A Slug!' } });

    expect(neither.status).toBe(400);
    expect(badSlug.status).toBe(400);
    expect(badSlug.body.errors[0].pointer).toBe('/body/slug');
  });

  it('answers 409 for a slug another workspace of the organization uses, and frees the old slug', async () => {
    const org = await makeOrganization('alpha');
    const beta = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'beta' } });

    const taken = await call('PATCH', '/workspace', { key: org.orgKey, body: { workspaceId: beta.body.data.id, slug: 'alpha' } });
    const moved = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { slug: 'alpha-2024' } });
    const reuse = await call('PATCH', '/workspace', {
      key: org.orgKey,
      query: { workspaceId: beta.body.data.id },
      body: { slug: 'alpha' },
    });

    expect(taken.status).toBe(409);
    expect(moved.status).toBe(200);
    expect(reuse.status).toBe(200);
  });

  it('needs workspaceId (query or body) from an organization key, and refuses two different ones', async () => {
    const org = await makeOrganization();
    const other = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'x' } });

    const none = await call('PATCH', '/workspace', { key: org.orgKey, body: { name: 'y' } });
    const conflicting = await call('PATCH', '/workspace', {
      key: org.orgKey,
      query: { workspaceId: org.workspaceId },
      body: { workspaceId: other.body.data.id, name: 'y' },
    });

    expect(none.status).toBe(400);
    expect(conflicting.status).toBe(400);
  });

  it('refuses a workspace key naming another workspace with 403', async () => {
    const org = await makeOrganization();
    const other = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'x' } });

    const response = await call('PATCH', '/workspace', { key: org.workspaceKey, body: { workspaceId: other.body.data.id, name: 'y' } });

    expect(response.status).toBe(403);
  });
});

describe('DELETE /workspace (Authentication rule 3)', () => {
  it('lets a workspace key delete its own workspace, after which the key is refused', async () => {
    const org = await makeOrganization();

    const response = await call('DELETE', '/workspace', { key: org.workspaceKey });
    const after = await call('GET', '/workspace', { key: org.workspaceKey });
    const listed = await call('GET', '/workspaces', { key: org.orgKey });

    expect(response.status).toBe(204);
    expect(response.body).toBe('');
    expect(after.status).toBe(401);
    expect(listed.body.data.data).toEqual([]);
  });

  it('refuses a workspace key deleting another workspace with 403', async () => {
    const org = await makeOrganization();
    const other = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'x' } });

    const response = await call('DELETE', '/workspace', { key: org.workspaceKey, query: { workspaceId: other.body.data.id } });
    const still = await call('GET', '/workspace', { key: org.orgKey, query: { workspaceId: other.body.data.id } });

    expect(response.status).toBe(403);
    expect(still.status).toBe(200);
  });

  it('lets an organization key delete any workspace of its organization, named in the query or body', async () => {
    const org = await makeOrganization();
    const a = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'a' } });
    const b = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'b' } });

    const byQuery = await call('DELETE', '/workspace', { key: org.orgKey, query: { workspaceId: a.body.data.id } });
    const byBody = await call('DELETE', '/workspace', { key: org.orgKey, body: { workspaceId: b.body.data.id } });
    const gone = await call('GET', '/workspace', { key: org.orgKey, query: { workspaceId: a.body.data.id } });
    const again = await call('DELETE', '/workspace', { key: org.orgKey, query: { workspaceId: a.body.data.id } });

    expect(byQuery.status).toBe(204);
    expect(byBody.status).toBe(204);
    expect(gone.status).toBe(404);
    expect(again.status).toBe(404);
  });

  it("needs workspaceId from an organization key and refuses another organization's workspace", async () => {
    const [org, other] = await Promise.all([makeOrganization(), makeOrganization()]);

    const none = await call('DELETE', '/workspace', { key: org.orgKey });
    const foreign = await call('DELETE', '/workspace', { key: org.orgKey, query: { workspaceId: other.workspaceId } });

    expect(none.status).toBe(400);
    expect(foreign.status).toBe(403);
  });
});

describe('workspace settings (Workspaces rules 2 and 3)', () => {
  it('reads STORE_ALWAYS by default, without needing the storage feature', async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspace/settings', { key: org.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ originalFileStoragePolicy: 'STORE_ALWAYS' });
  });

  it('refuses updates with 403 when the plan lacks the storage feature', async () => {
    const org = await makeOrganization();

    const response = await call('PATCH', '/workspace/settings', {
      key: org.workspaceKey,
      body: { originalFileStoragePolicy: 'NEVER_STORE' },
    });

    expect(response.status).toBe(403);
    expect(response.body.type).toContain('feature-not-enabled');
  });

  it('updates the policy with the storage feature, and validates the enum', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });

    const updated = await call('PATCH', '/workspace/settings', {
      key: org.workspaceKey,
      body: { originalFileStoragePolicy: 'ASK_PER_PROJECT' },
    });
    const read = await call('GET', '/workspace/settings', { key: org.workspaceKey });
    const invalid = await call('PATCH', '/workspace/settings', { key: org.workspaceKey, body: { originalFileStoragePolicy: 'SOMETIMES' } });

    expect(updated.status).toBe(200);
    expect(updated.body.data).toEqual({ originalFileStoragePolicy: 'ASK_PER_PROJECT' });
    expect(read.body.data).toEqual({ originalFileStoragePolicy: 'ASK_PER_PROJECT' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].pointer).toBe('/body/originalFileStoragePolicy');
  });

  it('archives retained originals with applyToExisting and NEVER_STORE, and reports how many', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const other = await makeOrganization();
    await makeRetainedOriginal({ workspaceId: org.workspaceId, organizationId: org.organizationId, filesize: 300 });
    await makeRetainedOriginal({ workspaceId: org.workspaceId, organizationId: org.organizationId, filesize: 200 });
    const elsewhere = await makeRetainedOriginal({ workspaceId: other.workspaceId, organizationId: other.organizationId, filesize: 50 });

    const response = await call('PATCH', '/workspace/settings', {
      key: org.workspaceKey,
      body: { originalFileStoragePolicy: 'NEVER_STORE', applyToExisting: true },
    });
    const breakdown = await waitForOriginalBytes(org.workspaceKey, 0);

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      originalFileStoragePolicy: 'NEVER_STORE',
      appliedToExistingCount: 2,
      jobId: expect.stringMatching(UUID),
    });
    expect(breakdown.originals).toBe(0);
    expect(await getOriginal(elsewhere.markupId)).toMatchObject({ state: 'retained' });
  });

  it('reports appliedToExistingCount only when applyToExisting was used', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });

    const without = await call('PATCH', '/workspace/settings', {
      key: org.workspaceKey,
      body: { originalFileStoragePolicy: 'STORE_ALWAYS' },
    });
    const withIt = await call('PATCH', '/workspace/settings', { key: org.workspaceKey, body: { applyToExisting: true } });

    expect(without.body.data).not.toHaveProperty('appliedToExistingCount');
    expect(withIt.body.data).toEqual({ originalFileStoragePolicy: 'STORE_ALWAYS', appliedToExistingCount: 0 });
  });
});

describe('POST /workspace/originals/archive-all', () => {
  it('needs the storage feature (403 without it)', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/workspace/originals/archive-all', { key: org.workspaceKey });

    expect(response.status).toBe(403);
  });

  it('archives every retained original of the workspace and answers 200 with archivedCount', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    for (let i = 0; i < 3; i += 1) await makeRetainedOriginal({ workspaceId: org.workspaceId, organizationId: org.organizationId });

    const first = await call('POST', '/workspace/originals/archive-all', { key: org.workspaceKey });
    const breakdown = await waitForOriginalBytes(org.workspaceKey, 0);
    const second = await call('POST', '/workspace/originals/archive-all', { key: org.workspaceKey });

    expect(first.status).toBe(200);
    expect(first.body).toEqual({ data: { archivedCount: 3, jobId: expect.stringMatching(UUID) } });
    expect(breakdown.originals).toBe(0);
    expect(second.body).toEqual({ data: { archivedCount: 0, jobId: expect.stringMatching(UUID) } });
    expect(second.body.data.jobId).not.toBe(first.body.data.jobId);
  });
});

describe('GET /workspace/storage-breakdown (Workspaces rules 3 and 4)', () => {
  it('needs the storage feature (403 without it)', async () => {
    const org = await makeOrganization();

    const response = await call('GET', '/workspace/storage-breakdown', { key: org.workspaceKey });

    expect(response.status).toBe(403);
  });

  it('reports the bytes stored by the whole organization, by kind, with their total', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const second = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Second' } });
    await addStoredBytes(org.organizationId, 'pdfs', 1_000);
    await addStoredBytes(org.organizationId, 'videos', 20_000);
    await addStoredBytes(org.organizationId, 'images', 300);
    await addStoredBytes(org.organizationId, 'attachments', 4);

    const fromDefault = await call('GET', '/workspace/storage-breakdown', { key: org.workspaceKey });
    const fromSecond = await call('GET', '/workspace/storage-breakdown', { key: org.orgKey, query: { workspaceId: second.body.data.id } });

    expect(fromDefault.status).toBe(200);
    expect(fromDefault.body.data).toEqual({ pdfs: 1_000, videos: 20_000, images: 300, attachments: 4, originals: 0, total: 21_304 });
    expect(fromSecond.body.data).toEqual(fromDefault.body.data);
  });
});
