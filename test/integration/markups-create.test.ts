import { describe, expect, it } from 'vitest';
import { getItem } from '../../shared/db/items.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { call, makeOrganization } from '../support/api.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { makeFolder } from '../support/markups.js';
import { MARKUP_FIELDS, createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace, usedThisMonth } from '../support/workspaces.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /markups/url (Markups table; creation rule 1)', () => {
  it('creates a webpage markup with every Markup field of the right type, named after the hostname, in the root', async () => {
    const org = await makeOrganization();
    const workspace = (await getWorkspace(org.workspaceId))!;

    const response = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://www.example.org/pricing?plan=pro' },
    });

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

    const unknown = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://a.example', parentFolderId: missingId },
    });
    const markupAsFolder = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://a.example', parentFolderId: existing.id },
    });
    const archive = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://a.example', parentFolderId: workspace.archiveFolderId },
    });
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

describe("Authentication rule 4: a workspaceId that is not the key's workspace in a markup creation request gives 403", () => {
  it('refuses a workspace key naming another workspace of its organization, and creates nothing', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');

    const named = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://a.example', workspaceId: other.id } });
    const byFolder = await call('POST', '/markups/url', {
      key: org.workspaceKey,
      body: { url: 'https://a.example', parentFolderId: other.rootFolderId },
    });

    expect(named.status).toBe(403);
    expect(byFolder.status).toBe(403);
    expect(await usedThisMonth(org.orgKey, other.id)).toBe(0);
  });

  it("refuses an organization key naming another organization's workspace or folder with 403", async () => {
    const [a, b] = await Promise.all([makeOrganization(), makeOrganization()]);
    const bWorkspace = (await getWorkspace(b.workspaceId))!;

    const workspace = await call('POST', '/markups/url', { key: a.orgKey, body: { url: 'https://a.example', workspaceId: b.workspaceId } });
    const folder = await call('POST', '/markups/url', {
      key: a.orgKey,
      body: { url: 'https://a.example', parentFolderId: bWorkspace.rootFolderId },
    });

    expect(workspace.status).toBe(403);
    expect(folder.status).toBe(403);
  });

  it('refuses a viewer with 403 (creating needs contributor)', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/markups/url', {
      key: await makeMemberKey(org.workspaceId, 'viewer'),
      body: { url: 'https://a.example' },
    });

    expect(response.status).toBe(403);
  });
});
