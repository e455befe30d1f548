import { describe, expect, it } from 'vitest';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { makeFolder } from '../support/markups.js';
import { createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace, usedThisMonth } from '../support/workspaces.js';

describe('POST /markups/bulk/from-url (all or nothing, one workspace)', () => {
  it('creates every item with 204', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);

    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: {
        items: [
          { url: 'https://one.example' },
          { url: 'https://two.example/x', name: 'Two', parentFolderId: folder.id },
          { url: 'https://three.example', workspaceId: org.workspaceId },
        ],
      },
    });

    expect(response.status).toBe(204);
    const list = await call('GET', '/markups', { key: org.workspaceKey });
    expect(
      list.body.data.data.map((markup: { name: string; parentFolderId: string }) => [markup.name, markup.parentFolderId === folder.id]),
    ).toEqual([
      ['three.example', false],
      ['Two', true],
      ['one.example', false],
    ]);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(3);
  });

  it('answers 400 naming the bad item and creates nothing', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: [{ url: 'https://ok.example' }, { url: 'mailto:a@b.c' }] },
    });

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
      body: {
        items: [
          { url: 'https://a.example', workspaceId: org.workspaceId },
          { url: 'https://b.example', workspaceId: other.id },
        ],
      },
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
    expect((await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 100 } })).body.data.data).toHaveLength(50);
  });

  it("answers 403 when an item names a workspace other than the key's (Authentication rule 4)", async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');

    const response = await call('POST', '/markups/bulk/from-url', {
      key: org.workspaceKey,
      body: { items: [{ url: 'https://a.example' }, { url: 'https://b.example', workspaceId: other.id }] },
    });

    expect(response.status).toBe(403);
    expect(await usedThisMonth(org.orgKey, org.workspaceId)).toBe(0);
  });
});

describe('POST /markups/bulk/move (Move rules 1 and 2; all or nothing)', () => {
  it('moves every markup into the target folder', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const [a, b] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);

    const response = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [a.id, b.id], targetFolderId: folder.id },
    });

    expect(response.status).toBe(204);
    for (const markup of [a, b]) {
      expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.parentFolderId).toBe(folder.id);
    }
  });

  it('may move markups into the archive folder, as item moves may', async () => {
    const org = await makeOrganization();
    const workspace = (await getWorkspace(org.workspaceId))!;
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id], targetFolderId: workspace.archiveFolderId },
    });

    expect(response.status).toBe(204);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.parentFolderId).toBe(
      workspace.archiveFolderId,
    );
  });

  it("refuses a viewer's move with 403 and lets a contributor move", async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const markup = await createMarkup(org.workspaceKey);

    const viewer = await call('POST', '/markups/bulk/move', {
      key: await makeMemberKey(org.workspaceId, 'viewer'),
      body: { markupIds: [markup.id], targetFolderId: folder.id },
    });
    const contributor = await call('POST', '/markups/bulk/move', {
      key: await makeMemberKey(org.workspaceId, 'contributor'),
      body: { markupIds: [markup.id], targetFolderId: folder.id },
    });

    expect(viewer.status).toBe(403);
    expect(contributor.status).toBe(204);
  });

  it('moves nothing when one id is unknown (404) or a folder (404), or listed twice (400)', async () => {
    const org = await makeOrganization();
    const folder = await makeFolder(org);
    const other = await makeFolder(org);
    const markup = await createMarkup(org.workspaceKey);

    const unknown = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id, missingId], targetFolderId: folder.id },
    });
    const notMarkup = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id, other.id], targetFolderId: folder.id },
    });
    const twice = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id, markup.id], targetFolderId: folder.id },
    });

    expect([unknown.status, notMarkup.status, twice.status]).toEqual([404, 404, 400]);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.parentFolderId).toBe(markup.parentFolderId);
  });

  it('answers 404 for an unknown target or a markup as target, and 400 for more than 50 or no ids', async () => {
    const org = await makeOrganization();
    const [markup, target] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);

    const unknown = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id], targetFolderId: missingId },
    });
    const markupTarget = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id], targetFolderId: target.id },
    });
    const tooMany = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: Array.from({ length: 51 }, () => markup.id), targetFolderId: markup.parentFolderId },
    });
    const none = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [], targetFolderId: markup.parentFolderId },
    });

    expect([unknown.status, markupTarget.status, tooMany.status, none.status]).toEqual([404, 404, 400, 400]);
  });

  it('answers 400 when the sources span several workspaces (Move rule 2)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const here = await createMarkup(org.orgKey);
    const there = await createMarkup(org.orgKey, { workspaceId: other.id });

    const response = await call('POST', '/markups/bulk/move', {
      key: org.orgKey,
      body: { markupIds: [here.id, there.id], targetFolderId: here.parentFolderId },
    });

    expect(response.status).toBe(400);
  });

  it('lets an organization key move into another workspace of its organization, a workspace key not (Move rule 1)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const markup = await createMarkup(org.workspaceKey);

    const workspaceKey = await call('POST', '/markups/bulk/move', {
      key: org.workspaceKey,
      body: { markupIds: [markup.id], targetFolderId: other.rootFolderId },
    });
    const orgKey = await call('POST', '/markups/bulk/move', {
      key: org.orgKey,
      body: { markupIds: [markup.id], targetFolderId: other.rootFolderId },
    });

    expect(workspaceKey.status).toBe(403);
    expect(orgKey.status).toBe(204);
    const moved = await call('GET', `/markups/${markup.id}`, { key: org.orgKey });
    expect(moved.body.data).toMatchObject({ workspaceId: other.id, parentFolderId: other.rootFolderId });
    expect(
      (await call('GET', '/markups', { key: org.orgKey, query: { workspaceId: other.id } })).body.data.data.map(
        (m: { id: string }) => m.id,
      ),
    ).toEqual([markup.id]);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data.data).toEqual([]);
  });
});

describe('POST /markups/bulk/delete (all or nothing)', () => {
  it('deletes every listed markup', async () => {
    const org = await makeOrganization();
    const [a, b, keep] = await Promise.all([
      createMarkup(org.workspaceKey),
      createMarkup(org.workspaceKey),
      createMarkup(org.workspaceKey),
    ]);

    const response = await call('POST', '/markups/bulk/delete', { key: org.workspaceKey, body: { markupIds: [a.id, b.id] } });

    expect(response.status).toBe(204);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data.data.map((m: { id: string }) => m.id)).toEqual([keep.id]);
  });

  it("deletes nothing when one id is unknown (404) and refuses ids outside the key's workspace (403)", async () => {
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
