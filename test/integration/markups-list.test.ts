import { describe, expect, it } from 'vitest';
import { call, makeOrganization } from '../support/api.js';
import { makeFolder, makeMarkups } from '../support/markups.js';
import { MARKUP_FIELDS, createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('GET /markups (ordered by createdAt descending; cursor pagination)', () => {
  it('visits each of 125 markups exactly once, newest first, following nextCursor, and goes back with since', async () => {
    const org = await makeOrganization();
    const made = await makeMarkups(org, 125);
    const expected = made.map((markup) => markup.id).reverse();

    const pages: { data: { id: string; createdAt: string }[]; hasMore: boolean; nextCursor: string | null; prevCursor: string | null }[] =
      [];
    let cursor: string | undefined;
    do {
      const response = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 50, before: cursor } });
      expect(response.status).toBe(200);
      pages.push(response.body.data);
      cursor = response.body.data.nextCursor ?? undefined;
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
    expect(back.body.data.data.map((markup: { id: string }) => markup.id)).toEqual(pages[1]!.data.map((markup) => markup.id));
    const first = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 50, since: back.body.data.prevCursor } });
    expect(first.body.data.data.map((markup: { id: string }) => markup.id)).toEqual(pages[0]!.data.map((markup) => markup.id));
    expect(first.body.data.prevCursor).toBeNull();
  });

  it('defaults to 50 a page and answers metadata only without include', async () => {
    const org = await makeOrganization();
    await makeMarkups(org, 55);

    const response = await call('GET', '/markups', { key: org.workspaceKey });

    expect(response.body.data.data).toHaveLength(50);
    expect(response.body.data.hasMore).toBe(true);
    expect(Object.keys(response.body.data.data[0]).sort()).toEqual(MARKUP_FIELDS);
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

    const response = await call('GET', '/markups', { key: b.workspaceKey, query: { before: page.body.data.nextCursor } });

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
    expect(named.body.data.data.map((found: { id: string }) => found.id)).toEqual([markup.id]);
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

  it.each(['media', 'images', 'videos', 'documents', 'images,videos,documents', ' media , images '])(
    'accepts include=%s',
    async (include) => {
      const org = await makeOrganization();
      await createMarkup(org.workspaceKey);

      const list = await call('GET', '/markups', { key: org.workspaceKey, query: { include } });
      const search = await call('GET', '/markups/search', { key: org.workspaceKey, query: { include, query: 'example' } });

      expect([list.status, search.status]).toEqual([200, 200]);
      expect(list.body.data.data[0].isReady).toBe(true);
      expect(search.body.data.data).toHaveLength(1);
    },
  );
});

describe('GET /markups/search (matches name or URL, includes subfolders)', () => {
  it('matches the name or the URL case-insensitively in every folder of the workspace only', async () => {
    const [org, stranger] = await Promise.all([makeOrganization(), makeOrganization()]);
    const folder = await makeFolder(org, { name: 'Outer' });
    const nested = await makeFolder(org, { name: 'Inner', parentFolderId: folder.id });
    const byName = await createMarkup(org.workspaceKey, { name: 'Spring SALE banner', url: 'https://shop.example/a' });
    const byUrl = await createMarkup(org.workspaceKey, {
      name: 'Landing',
      url: 'https://example.com/Sale-2026',
      parentFolderId: nested.id,
    });
    await createMarkup(org.workspaceKey, { name: 'About us', url: 'https://example.com/about' });
    await createMarkup(stranger.workspaceKey, { name: 'Sale elsewhere' });

    const response = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'sale' } });

    expect(response.status).toBe(200);
    expect(response.body.data.data.map((markup: { id: string }) => markup.id)).toEqual([byUrl.id, byName.id]);
    expect(response.body.data.hasMore).toBe(false);
    expect(response.body.data.nextCursor).toBeNull();
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
      const response = await call('GET', '/markups/search', {
        key: org.workspaceKey,
        query: { query: 'NeEdLe', limit: 40, before: cursor },
      });
      expect(response.status).toBe(200);
      visited.push(...response.body.data.data.map((markup: { id: string }) => markup.id));
      sizes.push(response.body.data.data.length);
      cursor = response.body.data.nextCursor ?? undefined;
      expect(response.body.data.hasMore).toBe(cursor !== undefined);
    } while (cursor);

    expect(sizes).toEqual([40, 40, 40, 10]);
    expect(visited).toEqual(expected);
  });

  it('answers 400 for a limit above 100 and for a cursor of the plain list', async () => {
    const org = await makeOrganization();
    await makeMarkups(org, 3);
    const listPage = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 1 } });

    const limit = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'page', limit: 101 } });
    const cursor = await call('GET', '/markups/search', {
      key: org.workspaceKey,
      query: { query: 'page', before: listPage.body.data.nextCursor },
    });

    expect(limit.status).toBe(400);
    expect(cursor.status).toBe(400);
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
