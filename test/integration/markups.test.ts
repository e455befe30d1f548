import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { listEvents } from '../../shared/db/events.js';
import { getItem } from '../../shared/db/items.js';
import { put, transact } from '../../shared/db/transact.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { markupTagItem, viewModeCountUpdate } from '../../shared/db/markup-records.js';
import { VIEW_MODES } from '../../shared/domain/markups.js';
import { createWorkspaceKey } from '../../shared/domain/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { makeFolder, makeMarkups } from '../support/markups.js';
import { makeSecondWorkspace, usedThisMonth } from '../support/workspaces.js';

const MARKUP_FIELDS = [
  'activeThreads',
  'createdAt',
  'deletedAt',
  'hasRetainedOriginal',
  'id',
  'isReady',
  'markupUrl',
  'modifiedAt',
  'name',
  'note',
  'parentFolderId',
  'projectReviews',
  'readOnly',
  'retainOriginal',
  'scopes',
  'status',
  'thumbnailUrl',
  'type',
  'url',
  'workspaceId',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function createMarkup(key: string, body: Record<string, unknown> = {}) {
  const response = await call('POST', '/markups/url', { key, body: { url: 'https://example.com/home', ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { id: string; name: string; parentFolderId: string; workspaceId: string; [field: string]: unknown };
}

describe('POST /markups/url (Markups table; creation rule 1)', () => {
  it('creates a webpage markup with every Markup field of the right type, named after the hostname, in the root', async () => {
    const org = await makeOrganization();
    const workspace = (await getWorkspace(org.workspaceId))!;

    const response = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://www.example.org/pricing?plan=pro' } });

    expect(response.status).toBe(200);
    const markup = response.body.data;
    expect(Object.keys(markup).sort()).toEqual(MARKUP_FIELDS);
    expect(markup).toMatchObject({
      type: 'webpage',
      url: 'https://www.example.org/pricing?plan=pro',
      name: 'www.example.org',
      deletedAt: null,
      activeThreads: 0,
      readOnly: false,
      status: 'editing',
      projectReviews: [],
      retainOriginal: false,
      hasRetainedOriginal: false,
      isReady: true,
      workspaceId: org.workspaceId,
      parentFolderId: workspace.rootFolderId,
    });
    expect(markup.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(markup.createdAt).toMatch(ISO);
    expect(markup.modifiedAt).toMatch(ISO);
    expect(markup.markupUrl).toContain(`/markups/${markup.id}`);
    expect(typeof markup.thumbnailUrl).toBe('string');
    expect(markup.note).toEqual({ id: expect.any(String), projectId: markup.id, note: '', showNoteOnProjectOpen: false });
    expect(markup.scopes).toEqual(expect.arrayContaining(['view-project', 'update-project', 'create-thread', 'delete-project']));
  });

  it('accepts the address of a supported file type and, for now, makes a webpage markup showing it', async () => {
    const org = await makeOrganization();

    const markup = await createMarkup(org.workspaceKey, { url: 'https://cdn.example.com/files/brochure.PDF', name: '  Brochure  ' });

    expect(markup).toMatchObject({ type: 'webpage', url: 'https://cdn.example.com/files/brochure.PDF', name: 'Brochure' });
  });

  it.each([
    ['a missing url', {}],
    ['an ftp address', { url: 'ftp://example.com/file' }],
    ['a javascript: address', { url: 'javascript:alert(1)' }],
    ['a relative address', { url: '/pricing' }],
    ['an address above 2048 characters', { url: `https://example.com/${'a'.repeat(2048)}` }],
    ['a url that is not a string', { url: 42 }],
    ['an empty name', { url: 'https://example.com', name: '   ' }],
    ['a workspaceId that is not a UUID', { url: 'https://example.com', workspaceId: 'nope' }],
  ])('answers 400 for %s and creates nothing', async (_case, body) => {
    const org = await makeOrganization();

    const response = await call('POST', '/markups/url', { key: org.workspaceKey, body });

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body.errors[0].pointer).toMatch(/^\/body\//);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(0);
  });

  it('puts the markup into parentFolderId, a subfolder of the workspace', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org, { name: 'Campaigns' });

    const markup = await createMarkup(org.workspaceKey, { parentFolderId: folder.id });

    expect(markup.parentFolderId).toBe(folder.id);
  });

  it('answers 404 for an unknown parentFolderId or a markup id, 400 for the archive folder or a folder of another workspace than workspaceId', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const existing = await createMarkup(org.workspaceKey);
    const workspace = (await getWorkspace(org.workspaceId))!;

    const unknown = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://a.example', parentFolderId: missingId } });
    const markupAsFolder = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://a.example', parentFolderId: existing.id } });
    const archive = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://a.example', parentFolderId: workspace.archiveFolderId } });
    const elsewhere = await call('POST', '/markups/url', {
      key: org.orgKey,
      body: { url: 'https://a.example', workspaceId: org.workspaceId, parentFolderId: other.rootFolderId },
    });

    expect(unknown.status).toBe(404);
    expect(markupAsFolder.status).toBe(404);
    expect(archive.status).toBe(400);
    expect(archive.body.type).toBe('urn:review-board:problem:folder-archived');
    expect(elsewhere.status).toBe(400);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(1);
  });

  it("uses an organization key's default workspace, the workspace it names, or the workspace of the folder it names", async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const folder = await makeFolder({ workspaceId: other.id });

    const byDefault = await createMarkup(org.orgKey);
    const named = await createMarkup(org.orgKey, { workspaceId: other.id });
    const byFolder = await createMarkup(org.orgKey, { parentFolderId: folder.id });

    expect(byDefault.workspaceId).toBe(org.workspaceId);
    expect(named).toMatchObject({ workspaceId: other.id, parentFolderId: other.rootFolderId });
    expect(byFolder).toMatchObject({ workspaceId: other.id, parentFolderId: folder.id });
  });

  it('records activity on the parent folder and the workspace', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const before = (await getWorkspace(org.workspaceId))!.lastActivityAt;

    const markup = await createMarkup(org.workspaceKey, { parentFolderId: folder.id });

    const folderAfter = await getItem(folder.id, true);
    expect(folderAfter!.activityAt).toBeGreaterThanOrEqual(Date.parse(markup.createdAt as string));
    expect((await getWorkspace(org.workspaceId))!.lastActivityAt > before).toBe(true);
  });
});

describe('Authentication rule 4: a workspaceId that is not the key\'s workspace in a markup creation request gives 403', () => {
  it('refuses a workspace key naming another workspace of its organization, and creates nothing', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');

    const named = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://a.example', workspaceId: other.id } });
    const byFolder = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://a.example', parentFolderId: other.rootFolderId } });

    expect(named.status).toBe(403);
    expect(byFolder.status).toBe(403);
    expect(await usedThisMonth(org.orgKey, other.id)).toBe(0);
  });

  it("refuses an organization key naming another organization's workspace or folder with 403", async () => {
    const [a, b] = await Promise.all([makeOrganization(), makeOrganization()]);
    const bWorkspace = (await getWorkspace(b.workspaceId))!;

    const workspace = await call('POST', '/markups/url', { key: a.orgKey, body: { url: 'https://a.example', workspaceId: b.workspaceId } });
    const folder = await call('POST', '/markups/url', { key: a.orgKey, body: { url: 'https://a.example', parentFolderId: bWorkspace.rootFolderId } });

    expect(workspace.status).toBe(403);
    expect(folder.status).toBe(403);
  });

  it('refuses a viewer with 403 (creating needs contributor)', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/markups/url', { key: await makeMemberKey(org.workspaceId, 'viewer'), body: { url: 'https://a.example' } });

    expect(response.status).toBe(403);
  });
});

describe('GET /markups/:id (files always included)', () => {
  it('answers the markup as created', async () => {
    const org = await makeOrganization();
    const created = await createMarkup(org.workspaceKey, { name: 'Landing' });

    const response = await call('GET', `/markups/${created.id}`, { key: org.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(created);
  });

  it('answers 404 for an unknown id and a folder id, 400 for an id that is not a UUID', async () => {
    const org = await makeOrganization();
    const workspace = (await getWorkspace(org.workspaceId))!;

    const unknown = await call('GET', `/markups/${missingId}`, { key: org.workspaceKey });
    const folder = await call('GET', `/markups/${workspace.rootFolderId}`, { key: org.workspaceKey });
    const malformed = await call('GET', '/markups/not-a-uuid', { key: org.workspaceKey });

    expect(unknown.status).toBe(404);
    expect(folder.status).toBe(404);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].pointer).toBe('/params/id');
  });

  it("answers 403 for a markup outside the key's scope: another workspace for a workspace key, another organization for any key", async () => {
    const [org, stranger] = await Promise.all([makeOrganization(), makeOrganization()]);
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const elsewhere = await createMarkup(org.orgKey, { workspaceId: other.id });
    const foreign = await createMarkup(stranger.workspaceKey);

    const sibling = await call('GET', `/markups/${elsewhere.id}`, { key: org.workspaceKey });
    const viaOrgKey = await call('GET', `/markups/${elsewhere.id}`, { key: org.orgKey });
    const otherOrg = await call('GET', `/markups/${foreign.id}`, { key: org.orgKey });

    expect(sibling.status).toBe(403);
    expect(viaOrgKey.status).toBe(200);
    expect(otherOrg.status).toBe(403);
  });

  it('reports scopes for what the caller can do: a viewer only views', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('GET', `/markups/${markup.id}`, { key: await makeMemberKey(org.workspaceId, 'viewer') });

    expect(response.status).toBe(200);
    expect(response.body.data.scopes).toEqual(['view-project']);
  });
});

describe('POST /markups/:id (rename)', () => {
  it('renames the markup and moves modifiedAt forward', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: { name: '  Homepage v2 ' } });

    expect(response.status).toBe(200);
    expect(response.body.data.name).toBe('Homepage v2');
    expect(Date.parse(response.body.data.modifiedAt)).toBeGreaterThan(Date.parse(markup.modifiedAt as string));
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name).toBe('Homepage v2');
  });

  it('answers 400 without a name, 404 for an unknown markup and 403 for a viewer', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const noName = await call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: {} });
    const unknown = await call('POST', `/markups/${missingId}`, { key: org.workspaceKey, body: { name: 'x' } });
    const viewer = await call('POST', `/markups/${markup.id}`, { key: await makeMemberKey(org.workspaceId, 'viewer'), body: { name: 'x' } });

    expect(noName.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(viewer.status).toBe(403);
  });

  it('keeps both renames of concurrent requests consistent: the markup ends with one of the names', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);
    const names = Array.from({ length: 8 }, (_, i) => `Name ${i}`);

    const responses = await Promise.all(names.map((name) => call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: { name } })));

    expect(responses.every((response) => response.status === 200 || response.status === 409)).toBe(true);
    const final = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name;
    expect(names).toContain(final);
    const search = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: final } });
    expect(search.body.data.map((found: { id: string }) => found.id)).toEqual([markup.id]);
  });
});

describe('DELETE /markups/:id', () => {
  it('answers 204 and the markup is gone from reads, the list and search', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey, { name: 'Doomed' });

    const response = await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey });

    expect(response.status).toBe(204);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(404);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data).toEqual([]);
    expect((await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'doomed' } })).body.data).toEqual([]);
    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(404);
  });

  it('refuses a contributor with 403 (deleting needs admin) and keeps the markup', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('DELETE', `/markups/${markup.id}`, { key: await makeMemberKey(org.workspaceId, 'contributor') });

    expect(response.status).toBe(403);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(200);
  });
});

describe('PATCH /markups/:id/read-only (States and transitions: readOnly)', () => {
  it('refuses pausing comments without the plan feature with 403 feature-not-enabled', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });

    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ type: 'urn:review-board:problem:feature-not-enabled', feature: 'pauseComments' });
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.readOnly).toBe(false);
  });

  it('pauses comments with the feature, reflects it in scopes, and always allows resuming', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const markup = await createMarkup(org.workspaceKey);
    expect(markup.scopes).toContain('update-project-read-only');

    const paused = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await setPlan(org.organizationId, { pauseCommentsEnabled: false });
    const stillPaused = await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey });
    const resumed = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } });

    expect(paused.status).toBe(200);
    expect(paused.body.data.readOnly).toBe(true);
    expect(paused.body.data.scopes).not.toContain('create-thread');
    expect(stillPaused.body.data.scopes).toContain('update-project-read-only');
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.readOnly).toBe(false);
    expect(resumed.body.data.scopes).toContain('create-thread');
    expect(resumed.body.data.scopes).not.toContain('update-project-read-only');
  });

  it('answers 400 for a readOnly that is not a boolean and 403 for a contributor', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const markup = await createMarkup(org.workspaceKey);

    const invalid = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: 'yes' } });
    const contributor = await call('PATCH', `/markups/${markup.id}/read-only`, { key: await makeMemberKey(org.workspaceId, 'contributor'), body: { readOnly: true } });

    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].pointer).toBe('/body/readOnly');
    expect(contributor.status).toBe(403);
  });
});

describe('GET /markups (ordered by createdAt descending; cursor pagination)', () => {
  it('visits each of 125 markups exactly once, newest first, following nextCursor, and goes back with since', async () => {
    const org = await makeOrganization();
    const made = await makeMarkups(org, 125);
    const expected = made.map((markup) => markup.id).reverse();

    const pages: { data: { id: string; createdAt: string }[]; hasMore: boolean; nextCursor: string | null; prevCursor: string | null }[] = [];
    let cursor: string | undefined;
    do {
      const response = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 50, before: cursor } });
      expect(response.status).toBe(200);
      pages.push(response.body);
      cursor = response.body.nextCursor ?? undefined;
    } while (cursor);

    expect(pages.map((page) => page.data.length)).toEqual([50, 50, 25]);
    expect(pages.map((page) => page.hasMore)).toEqual([true, true, false]);
    const visited = pages.flatMap((page) => page.data);
    expect(visited.map((markup) => markup.id)).toEqual(expected);
    const times = visited.map((markup) => Date.parse(markup.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(pages[0]!.prevCursor).toBeNull();

    const back = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 50, since: pages[2]!.prevCursor! } });
    expect(back.status).toBe(200);
    expect(back.body.data.map((markup: { id: string }) => markup.id)).toEqual(pages[1]!.data.map((markup) => markup.id));
    const first = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 50, since: back.body.prevCursor } });
    expect(first.body.data.map((markup: { id: string }) => markup.id)).toEqual(pages[0]!.data.map((markup) => markup.id));
    expect(first.body.prevCursor).toBeNull();
  });

  it('defaults to 50 a page and answers metadata only without include', async () => {
    const org = await makeOrganization();
    await makeMarkups(org, 55);

    const response = await call('GET', '/markups', { key: org.workspaceKey });

    expect(response.body.data).toHaveLength(50);
    expect(response.body.hasMore).toBe(true);
    expect(Object.keys(response.body.data[0]).sort()).toEqual(MARKUP_FIELDS);
  });

  it.each([
    ['limit', '0'],
    ['limit', '101'],
    ['limit', 'ten'],
    ['ttl', '0'],
    ['ttl', '604801'],
    ['ttl', '1.5'],
    ['before', 'forged.cursor'],
  ])('answers 400 for %s=%s', async (name, value) => {
    const org = await makeOrganization();

    const response = await call('GET', '/markups', { key: org.workspaceKey, query: { [name]: value } });

    expect(response.status).toBe(400);
  });

  it('accepts ttl from 1 to 604800 seconds', async () => {
    const org = await makeOrganization();

    const shortest = await call('GET', '/markups', { key: org.workspaceKey, query: { ttl: 1 } });
    const longest = await call('GET', '/markups', { key: org.workspaceKey, query: { ttl: 604800 } });

    expect([shortest.status, longest.status]).toEqual([200, 200]);
  });

  it("refuses another workspace's cursor with 400", async () => {
    const [a, b] = await Promise.all([makeOrganization(), makeOrganization()]);
    await Promise.all([makeMarkups(a, 3), makeMarkups(b, 3)]);
    const page = await call('GET', '/markups', { key: a.workspaceKey, query: { limit: 1 } });

    const response = await call('GET', '/markups', { key: b.workspaceKey, query: { before: page.body.nextCursor } });

    expect(response.status).toBe(400);
  });

  it('needs workspaceId from an organization key (400 without) and lists the workspace it names', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const markup = await createMarkup(org.orgKey, { workspaceId: other.id });

    const without = await call('GET', '/markups', { key: org.orgKey });
    const named = await call('GET', '/markups', { key: org.orgKey, query: { workspaceId: other.id } });
    const outOfScope = await call('GET', '/markups', { key: org.workspaceKey, query: { workspaceId: other.id } });

    expect(without.status).toBe(400);
    expect(named.body.data.map((found: { id: string }) => found.id)).toEqual([markup.id]);
    expect(outOfScope.status).toBe(403);
  });
});

describe('include (creation and reading rules 7 and 8)', () => {
  it.each(['/markups', '/markups/search'])('%s answers 400 naming an unrecognised include value', async (path) => {
    const org = await makeOrganization();

    const response = await call('GET', path, { key: org.workspaceKey, query: { include: 'images,thumbnails' } });

    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe('/query/include');
    expect(response.body.detail).toContain('"thumbnails"');
    expect(response.body.detail).not.toContain('"images"');
  });

  it.each(['media', 'images', 'videos', 'documents', 'images,videos,documents', ' media , images '])('accepts include=%s', async (include) => {
    const org = await makeOrganization();
    await createMarkup(org.workspaceKey);

    const list = await call('GET', '/markups', { key: org.workspaceKey, query: { include } });
    const search = await call('GET', '/markups/search', { key: org.workspaceKey, query: { include, query: 'example' } });

    expect([list.status, search.status]).toEqual([200, 200]);
    expect(list.body.data[0].isReady).toBe(true);
    expect(search.body.data).toHaveLength(1);
  });
});

describe('GET /markups/search (matches name or URL, includes subfolders)', () => {
  it('matches the name or the URL case-insensitively in every folder of the workspace only', async () => {
    const [org, stranger] = await Promise.all([makeOrganization(), makeOrganization()]);
    const folder = await makeFolder(org, { name: 'Outer' });
    const nested = await makeFolder(org, { name: 'Inner', parentFolderId: folder.id });
    const byName = await createMarkup(org.workspaceKey, { name: 'Spring SALE banner', url: 'https://shop.example/a' });
    const byUrl = await createMarkup(org.workspaceKey, { name: 'Landing', url: 'https://example.com/Sale-2026', parentFolderId: nested.id });
    await createMarkup(org.workspaceKey, { name: 'About us', url: 'https://example.com/about' });
    await createMarkup(stranger.workspaceKey, { name: 'Sale elsewhere' });

    const response = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'sale' } });

    expect(response.status).toBe(200);
    expect(response.body.data.map((markup: { id: string }) => markup.id)).toEqual([byUrl.id, byName.id]);
    expect(response.body.hasMore).toBe(false);
    expect(response.body.nextCursor).toBeNull();
  });

  it('pages through 130 matches among 200 markups, each exactly once, following nextCursor', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const sub = await makeFolder(org, { parentFolderId: folder.id });
    const startAt = Date.now() - 1_000_000;
    const rootOnes = await makeMarkups(org, 100, { startAt, name: (i) => (i % 10 < 7 ? `Needle ${i}` : `Hay ${i}`) });
    const subOnes = await makeMarkups(org, 100, {
      startAt: startAt + 500,
      parentFolderId: sub.id,
      name: (i) => `Item ${i}`,
      url: (i) => (i % 10 < 6 ? `https://example.com/NEEDLE/${i}` : `https://example.com/hay/${i}`),
    });
    const expected = [...rootOnes, ...subOnes]
      .filter((markup) => `${markup.name} ${markup.url}`.toLowerCase().includes('needle'))
      .sort((a, b) => b.createdAt - a.createdAt)
      .map((markup) => markup.id);
    expect(expected).toHaveLength(130);

    const visited: string[] = [];
    const sizes: number[] = [];
    let cursor: string | undefined;
    do {
      const response = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'NeEdLe', limit: 40, before: cursor } });
      expect(response.status).toBe(200);
      visited.push(...response.body.data.map((markup: { id: string }) => markup.id));
      sizes.push(response.body.data.length);
      cursor = response.body.nextCursor ?? undefined;
      expect(response.body.hasMore).toBe(cursor !== undefined);
    } while (cursor);

    expect(sizes).toEqual([40, 40, 40, 10]);
    expect(visited).toEqual(expected);
  });

  it('answers 400 for a limit above 100 and for a cursor of the plain list', async () => {
    const org = await makeOrganization();
    await makeMarkups(org, 3);
    const listPage = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 1 } });

    const limit = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'page', limit: 101 } });
    const cursor = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'page', before: listPage.body.nextCursor } });

    expect(limit.status).toBe(400);
    expect(cursor.status).toBe(400);
  });
});

describe('POST /markups/bulk/from-url (all or nothing, one workspace)', () => {
  it('creates every item with 204', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);

    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: [{ url: 'https://one.example' }, { url: 'https://two.example/x', name: 'Two', parentFolderId: folder.id }, { url: 'https://three.example', workspaceId: org.workspaceId }] },
    });

    expect(response.status).toBe(204);
    const list = await call('GET', '/markups', { key: org.workspaceKey });
    expect(list.body.data.map((markup: { name: string; parentFolderId: string }) => [markup.name, markup.parentFolderId === folder.id])).toEqual([
      ['three.example', false],
      ['Two', true],
      ['one.example', false],
    ]);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(3);
  });

  it('answers 400 naming the bad item and creates nothing', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/markups/bulk/from-url', { key: org.workspaceKey, body: { items: [{ url: 'https://ok.example' }, { url: 'mailto:a@b.c' }] } });

    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe('/body/items/1/url');
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(0);
  });

  it('answers 400 for no items, more than 50 items, and items in two workspaces', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');

    const none = await call('POST', '/markups/bulk/from-url', { key: org.orgKey, body: { items: [] } });
    const tooMany = await call('POST', '/markups/bulk/from-url', {
      key: org.orgKey,
      body: { items: Array.from({ length: 51 }, (_, i) => ({ url: `https://e.example/${i}` })) },
    });
    const split = await call('POST', '/markups/bulk/from-url', {
      key: org.orgKey,
      body: { items: [{ url: 'https://a.example', workspaceId: org.workspaceId }, { url: 'https://b.example', workspaceId: other.id }] },
    });

    expect([none.status, tooMany.status, split.status]).toEqual([400, 400, 400]);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(0);
    expect(await usedThisMonth(org.orgKey, other.id)).toBe(0);
  });

  it('creates 50 items in one request', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: null });

    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: Array.from({ length: 50 }, (_, i) => ({ url: `https://e.example/${i}` })) },
    });

    expect(response.status).toBe(204);
    expect((await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 100 } })).body.data).toHaveLength(50);
  });

  it('answers 403 when an item names a workspace other than the key\'s (Authentication rule 4)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');

    const response = await call('POST', '/markups/bulk/from-url', { key: org.workspaceKey, body: { items: [{ url: 'https://a.example' }, { url: 'https://b.example', workspaceId: other.id }] } });

    expect(response.status).toBe(403);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(0);
  });
});

describe('POST /markups/bulk/move (Move rules 1 and 2; all or nothing)', () => {
  it('moves every markup into the target folder', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const [a, b] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);

    const response = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [a.id, b.id], targetFolderId: folder.id } });

    expect(response.status).toBe(204);
    for (const markup of [a, b]) {
      expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.parentFolderId).toBe(folder.id);
    }
  });

  it('may move markups into the archive folder, as item moves may', async () => {
    const org = await makeOrganization();
    const workspace = (await getWorkspace(org.workspaceId))!;
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id], targetFolderId: workspace.archiveFolderId } });

    expect(response.status).toBe(204);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.parentFolderId).toBe(workspace.archiveFolderId);
  });

  it("refuses a viewer's move with 403 and lets a contributor move", async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const markup = await createMarkup(org.workspaceKey);

    const viewer = await call('POST', '/markups/bulk/move', { key: await makeMemberKey(org.workspaceId, 'viewer'), body: { markupIds: [markup.id], targetFolderId: folder.id } });
    const contributor = await call('POST', '/markups/bulk/move', { key: await makeMemberKey(org.workspaceId, 'contributor'), body: { markupIds: [markup.id], targetFolderId: folder.id } });

    expect(viewer.status).toBe(403);
    expect(contributor.status).toBe(204);
  });

  it('moves nothing when one id is unknown (404) or a folder (404), or listed twice (400)', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const other = await makeFolder(org);
    const markup = await createMarkup(org.workspaceKey);

    const unknown = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id, missingId], targetFolderId: folder.id } });
    const notMarkup = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id, other.id], targetFolderId: folder.id } });
    const twice = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id, markup.id], targetFolderId: folder.id } });

    expect([unknown.status, notMarkup.status, twice.status]).toEqual([404, 404, 400]);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.parentFolderId).toBe(markup.parentFolderId);
  });

  it('answers 404 for an unknown target or a markup as target, and 400 for more than 50 or no ids', async () => {
    const org = await makeOrganization();
    const [markup, target] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);

    const unknown = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id], targetFolderId: missingId } });
    const markupTarget = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id], targetFolderId: target.id } });
    const tooMany = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: Array.from({ length: 51 }, () => markup.id), targetFolderId: markup.parentFolderId },
    });
    const none = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [], targetFolderId: markup.parentFolderId } });

    expect([unknown.status, markupTarget.status, tooMany.status, none.status]).toEqual([404, 404, 400, 400]);
  });

  it('answers 400 when the sources span several workspaces (Move rule 2)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const here = await createMarkup(org.orgKey);
    const there = await createMarkup(org.orgKey, { workspaceId: other.id });

    const response = await call('POST', '/markups/bulk/move', { key: org.orgKey, body: { markupIds: [here.id, there.id], targetFolderId: here.parentFolderId } });

    expect(response.status).toBe(400);
  });

  it('lets an organization key move into another workspace of its organization, a workspace key not (Move rule 1)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const markup = await createMarkup(org.workspaceKey);

    const workspaceKey = await call('POST', '/markups/bulk/move', { key: org.workspaceKey, body: { markupIds: [markup.id], targetFolderId: other.rootFolderId } });
    const orgKey = await call('POST', '/markups/bulk/move', { key: org.orgKey, body: { markupIds: [markup.id], targetFolderId: other.rootFolderId } });

    expect(workspaceKey.status).toBe(403);
    expect(orgKey.status).toBe(204);
    const moved = await call('GET', `/markups/${markup.id}`, { key: org.orgKey });
    expect(moved.body.data).toMatchObject({ workspaceId: other.id, parentFolderId: other.rootFolderId });
    expect((await call('GET', '/markups', { key: org.orgKey, query: { workspaceId: other.id } })).body.data.map((m: { id: string }) => m.id)).toEqual([markup.id]);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data).toEqual([]);
  });
});

describe('POST /markups/bulk/delete (all or nothing)', () => {
  it('deletes every listed markup', async () => {
    const org = await makeOrganization();
    const [a, b, keep] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);

    const response = await call('POST', '/markups/bulk/delete', { key: org.workspaceKey, body: { markupIds: [a.id, b.id] } });

    expect(response.status).toBe(204);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data.map((m: { id: string }) => m.id)).toEqual([keep.id]);
  });

  it('deletes nothing when one id is unknown (404) and refuses ids outside the key\'s workspace (403)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const mine = await createMarkup(org.workspaceKey);
    const theirs = await createMarkup(org.orgKey, { workspaceId: other.id });

    const unknown = await call('POST', '/markups/bulk/delete', { key: org.workspaceKey, body: { markupIds: [mine.id, missingId] } });
    const outOfScope = await call('POST', '/markups/bulk/delete', { key: org.workspaceKey, body: { markupIds: [mine.id, theirs.id] } });
    const invalid = await call('POST', '/markups/bulk/delete', { key: org.workspaceKey, body: { markupIds: ['nope'] } });

    expect([unknown.status, outOfScope.status, invalid.status]).toEqual([404, 403, 400]);
    expect((await call('GET', `/markups/${mine.id}`, { key: org.workspaceKey })).status).toBe(200);
    expect((await call('GET', `/markups/${theirs.id}`, { key: org.orgKey })).status).toBe(200);
  });
});

describe('POST /markups/bulk/from-files (creation rule 10: unimplemented, always rejects)', () => {
  it('answers 501 with a problem pointing to POST /markups/from-files', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/markups/bulk/from-files', { key: org.workspaceKey, body: { items: [{ fileIds: [missingId] }] } });

    expect(response.status).toBe(501);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body).toMatchObject({ type: 'urn:review-board:problem:not-implemented', status: 501 });
    expect(response.body.detail).toContain('POST /api/v2/markups/from-files');
  });

  it('still asks for credentials first (401)', async () => {
    const response = await call('POST', '/markups/bulk/from-files', { body: { items: [] } });

    expect(response.status).toBe(401);
  });
});

describe('GET /markups/:id/tag (Markup tags)', () => {
  it('lists the workspace members as taggable and the users tagged in threads', async () => {
    const org = await makeOrganization();
    const member = await createWorkspaceKey(org.workspaceId, { email: 'Dana@Example.com', role: 'contributor' });
    const markup = await createMarkup(org.workspaceKey);

    const before = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });
    await transact([put(markupTagItem(markup.id, member.userId))]);
    const after = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });

    expect(before.status).toBe(200);
    expect(before.body.data).toEqual({ taggable: [{ id: member.userId, name: 'Dana', email: 'dana@example.com', role: 'contributor' }], tagged: [] });
    expect(after.body.data.tagged).toEqual([{ id: member.userId, name: 'Dana', email: 'dana@example.com' }]);
  });

  it('answers 404 for an unknown markup', async () => {
    const org = await makeOrganization();

    expect((await call('GET', `/markups/${missingId}/tag`, { key: org.workspaceKey })).status).toBe(404);
  });
});

describe('GET /markups/:id/view-modes (listed as 204, answers 200 with data)', () => {
  it('lists desktop, tablet and mobile with stable ids and per-mode thread counts', async () => {
    const org = await makeOrganization();
    const [a, b] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);
    await transact([viewModeCountUpdate(a.id, VIEW_MODES[2]!.id, 2)]);

    const first = await call('GET', `/markups/${a.id}/view-modes`, { key: org.workspaceKey });
    const second = await call('GET', `/markups/${b.id}/view-modes`, { key: org.workspaceKey });

    expect(first.status).toBe(200);
    expect(first.body.data.map((mode: { category: string }) => mode.category)).toEqual(['desktop', 'tablet', 'mobile']);
    expect(first.body.data.map((mode: { threadCount: number }) => mode.threadCount)).toEqual([0, 0, 2]);
    expect(second.body.data.map((mode: { id: string }) => mode.id)).toEqual(first.body.data.map((mode: { id: string }) => mode.id));
    for (const mode of first.body.data) {
      expect(mode).toEqual({ id: expect.any(String), category: expect.any(String), name: expect.any(String), width: expect.any(Number), threadCount: expect.any(Number) });
    }
  });

  it('drops the counters with the markup', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);
    await transact([viewModeCountUpdate(markup.id, VIEW_MODES[0]!.id, 1)]);

    await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey });

    expect((await call('GET', `/markups/${markup.id}/view-modes`, { key: org.workspaceKey })).status).toBe(404);
    const left = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: { PK: `MARKUP#${markup.id}`, SK: `VIEWMODE#${VIEW_MODES[0]!.id}` } }));
    expect(left.Item).toBeUndefined();
  });
});

describe('route specificity: literal paths beside /markups/{id}', () => {
  it.each([
    ['GET', '/markups/usage'],
    ['GET', '/markups/search'],
  ])('%s %s reaches its own operation', async (method, path) => {
    const org = await makeOrganization();

    const response = await call(method, path, { key: org.workspaceKey });

    expect(response.status).toBe(200);
  });
});

describe('events recorded for webhooks (DESIGN.md: which operation emits which event)', () => {
  it('records markup_created for a creation and set_project_read_only only when read-only really changes', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const created = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://example.com/events' } });
    const id = created.body.data.id;

    await call('PATCH', `/markups/${id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await call('PATCH', `/markups/${id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await call('PATCH', `/markups/${id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } });
    const events = await listEvents(org.workspaceId);

    expect(events.map((event) => [event.type, event.markupId])).toEqual([
      ['markup_created', id],
      ['set_project_read_only', id],
      ['set_project_read_only', id],
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });
});
