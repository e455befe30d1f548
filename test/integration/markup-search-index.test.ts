import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { itemKey, toItem } from '../../shared/db/items.js';
import { backfillMarkupWords } from '../../shared/db/markup-words-backfill.js';
import { WORD_KEY_ATTRIBUTES } from '../../shared/db/markup-words.js';
import { batchPut } from '../../shared/db/core/transact.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { newWebpageMarkupRecord } from '../../shared/domain/markups/create.js';
import { getItem, type FolderRecord, type MarkupRecord } from '../../shared/db/items.js';
import { handler as markupsHandler } from '../../functions/markups/handler.js';
import { markupsRoutes } from '../../functions/markups/routes.js';
import { call, makeOrganization } from '../support/api.js';
import { countRequests, invokeHandler } from '../support/request-count.js';
import { makeFolder } from '../support/markups.js';
import { moveFinished } from '../support/moves.js';
import { createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/** A word no other test writes: letters and digits only, so it is one word. */
const uniqueWord = (label: string) => `${label}${randomUUID().replace(/-/g, '').slice(0, 10)}`;

/**
 * A fixture markup with no work left for the workers (its thumbnail given up): written straight to
 * the table, it must stay out of the pending-work index, or the sweep another test runs would queue
 * a render of each of these thousands of pages and starve the queue the other tests wait on.
 */
const settled = (record: MarkupRecord): MarkupRecord => ({ ...record, thumbnailState: 'unavailable' });

/** Every markup id GET /markups/search lists for `query`, cursors followed to the end (each page asserted to be one request's answer). */
async function searchAll(key: string, query: string, options: { workspaceId?: string; limit?: number } = {}): Promise<string[]> {
  const ids: string[] = [];
  let before: string | undefined;
  do {
    const response = await call('GET', '/markups/search', {
      key,
      query: { query, limit: options.limit ?? 100, before, workspaceId: options.workspaceId },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    ids.push(...response.body.data.data.map((markup: { id: string }) => markup.id));
    before = response.body.data.nextCursor ?? undefined;
  } while (before);
  return ids;
}

/** `count` webpage markups written straight to the table as the create path builds them, plus one named `rareName`, the oldest. */
async function seedWorkspace(workspaceId: string, count: number, rareName: string): Promise<string> {
  const workspace = (await getWorkspace(workspaceId))!;
  const parent = (await getItem(workspace.rootFolderId)) as FolderRecord;
  const at = Date.now() - (count + 1) * 1000;
  const records = Array.from({ length: count + 1 }, (_, i) =>
    newWebpageMarkupRecord({
      placement: { workspace, parent },
      url: `https://www.example.com/pages/page-${i}`,
      name: i === 0 ? rareName : `Landing page ${i}`,
      createdBy: randomUUID(),
      at: at + i * 1000,
    }),
  );
  await batchPut(records.map(settled).map(toItem));
  return records[0]!.id;
}

describe('GET /markups/search costs the same whatever the workspace holds (issue 34)', { timeout: 180_000 }, () => {
  it('finds a rare word in one request with the same DynamoDB calls and about the same bytes among 20 and among 2,000 markups', async () => {
    const [small, large] = await Promise.all([makeOrganization(), makeOrganization()]);
    const word = uniqueWord('rare');
    const [smallId, largeId] = await Promise.all([
      seedWorkspace(small.workspaceId, 20, `${word} report`),
      seedWorkspace(large.workspaceId, 2000, `${word} report`),
    ]);
    const markups = { name: 'markups', routes: markupsRoutes, handler: markupsHandler };
    const search = (key: string) => countRequests(() => invokeHandler(markups, 'GET', '/markups/search', { key, query: { query: word } }));

    // Once before counting: the process's first search reads the cursor key, and a listed markup's first unread count is computed and kept.
    await Promise.all([search(small.workspaceKey), search(large.workspaceKey)]);
    const [few, many] = [await search(small.workspaceKey), await search(large.workspaceKey)];

    expect(few.result.body.data).toMatchObject({ data: [{ id: smallId }], hasMore: false, nextCursor: null });
    expect(many.result.body.data).toMatchObject({ data: [{ id: largeId }], hasMore: false, nextCursor: null });
    expect(JSON.stringify(many.counts)).toBe(JSON.stringify(few.counts));
    // Before the word index the search read the workspace's markups: 2,000 items, megabytes.
    expect(many.bytes).toBeLessThan(50_000);
    expect(many.bytes).toBeLessThan(1.5 * few.bytes);
  });
});

describe('the markup word index keeps GET /markups/search exact (issue 34)', { timeout: 120_000 }, () => {
  it('after 20 parallel renames of one markup finds it by its last name only', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey, { name: 'Original racing name' });
    const names = Array.from({ length: 20 }, (_, i) => `${uniqueWord(`race${i}x`)} draft`);

    const responses = await Promise.all(
      names.map((name) => call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: { name } })),
    );

    expect(responses.filter((response) => response.status === 200).length).toBeGreaterThan(0);
    for (const response of responses) expect([200, 409, 412]).toContain(response.status);
    const final = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name as string;
    expect(names).toContain(final);
    const found = await Promise.all(names.map(async (name) => [name, await searchAll(org.workspaceKey, name.split(' ')[0]!)] as const));
    for (const [name, ids] of found) expect(ids, name).toEqual(name === final ? [markup.id] : []);
    expect(await searchAll(org.workspaceKey, 'racing')).toEqual([]);
  });

  it('follows a markup and a folder of markups moved into another workspace: found in the new, not in the old', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey);
    const word = uniqueWord('moved');
    const single = await createMarkup(org.workspaceKey, { name: `${word} alone` });
    const folder = await makeFolder(org, { name: 'Carried' });
    const carried = await Promise.all(
      [1, 2, 3].map((i) => createMarkup(org.workspaceKey, { name: `${word} carried ${i}`, parentFolderId: folder.id })),
    );

    expect(
      (await call('PATCH', `/items/${single.id}/move`, { key: org.orgKey, body: { parentFolderId: other.rootFolderId } })).status,
    ).toBe(200);
    expect(
      (await call('PATCH', `/items/${folder.id}/move`, { key: org.orgKey, body: { parentFolderId: other.rootFolderId } })).status,
    ).toBe(200);
    expect((await moveFinished(folder.id))?.state).toBe('done');

    expect(await searchAll(org.orgKey, word, { workspaceId: org.workspaceId })).toEqual([]);
    expect(new Set(await searchAll(org.orgKey, word, { workspaceId: other.id }))).toEqual(
      new Set([single.id, ...carried.map((markup) => markup.id)]),
    );
  });

  it('finds archived markups as before and never a deleted one', async () => {
    const org = await makeOrganization();
    const word = uniqueWord('archived');
    const archived = await createMarkup(org.workspaceKey, { name: `${word} old release` });
    const deleted = await createMarkup(org.workspaceKey, { name: `${word} gone` });

    expect((await call('PATCH', '/items/archive', { key: org.workspaceKey, body: { folderItemIds: [archived.id] } })).status).toBe(204);
    expect((await call('DELETE', `/markups/${deleted.id}`, { key: org.workspaceKey })).status).toBe(204);

    expect(await searchAll(org.workspaceKey, word)).toEqual([archived.id]);
  });

  it('pages a prefix that starts several words of one markup, listing each markup once, and needs every query word', async () => {
    const org = await makeOrganization();
    const stem = uniqueWord('pg');
    const workspace = (await getWorkspace(org.workspaceId))!;
    const parent = (await getItem(workspace.rootFolderId)) as FolderRecord;
    const at = Date.now() - 100_000;
    const records = Array.from({ length: 45 }, (_, i) =>
      newWebpageMarkupRecord({
        placement: { workspace, parent },
        // Up to three words starting with the stem (name and URL), and every third one blue.
        url: `https://example.com/${stem}${i % 3 === 0 ? 'url' : ''}/${i}`,
        name: `${stem} ${i % 2 === 0 ? `${stem}s` : 'plain'} ${i % 3 === 0 ? 'blue' : 'red'} ${i}`,
        createdBy: randomUUID(),
        at: at + i * 1000,
      }),
    );
    await batchPut(records.map(settled).map(toItem));

    const visited = await searchAll(org.workspaceKey, stem, { limit: 7 });
    expect(visited).toHaveLength(45);
    expect(new Set(visited)).toEqual(new Set(records.map((record) => record.id)));
    // One word: newest first within the word the markups share.
    expect(visited).toEqual([...records].reverse().map((record) => record.id));

    const blue = await searchAll(org.workspaceKey, `Blu ${stem.toUpperCase()}`, { limit: 4 });
    expect(new Set(blue)).toEqual(new Set(records.filter((_, i) => i % 3 === 0).map((record) => record.id)));
    expect(blue).toHaveLength(15);
  });

  it('backfills markups written before the index: found afterwards, the same on a second run, and never an older name over a concurrent rename', async () => {
    const org = await makeOrganization();
    const word = uniqueWord('legacy');
    const workspace = (await getWorkspace(org.workspaceId))!;
    const parent = (await getItem(workspace.rootFolderId)) as FolderRecord;
    const records = Array.from({ length: 30 }, (_, i) =>
      newWebpageMarkupRecord({
        placement: { workspace, parent },
        url: `https://example.com/legacy/${i}`,
        name: `${word} ${i}`,
        createdBy: randomUUID(),
        at: Date.now() - 60_000 + i,
      }),
    );
    const withoutIndex = (item: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(item).filter(([name]) => !WORD_KEY_ATTRIBUTES.includes(name)));
    await batchPut(records.map((record) => withoutIndex(toItem(settled(record)))));
    expect(await searchAll(org.workspaceKey, word)).toEqual([]);

    // A rename racing the backfill: 10 renames of the first markup while the backfill runs.
    const renamed = records[0]!;
    const newNames = Array.from({ length: 10 }, (_, i) => uniqueWord(`renamed${i}x`));
    const renames = (async () => {
      for (const name of newNames)
        expect((await call('POST', `/markups/${renamed.id}`, { key: org.workspaceKey, body: { name } })).status).toBe(200);
    })();
    const [first] = await Promise.all([backfillMarkupWords({ workspaceId: org.workspaceId }), renames]);
    expect(first.markups).toBe(30);
    expect(first.gone).toBe(0);

    const second = await backfillMarkupWords({ workspaceId: org.workspaceId });
    expect(second).toEqual({ markups: 30, indexed: 0, alreadyIndexed: 30, gone: 0, retries: 0 });

    expect(new Set(await searchAll(org.workspaceKey, word))).toEqual(new Set(records.slice(1).map((record) => record.id)));
    expect(await searchAll(org.workspaceKey, newNames.at(-1)!)).toEqual([renamed.id]);
    for (const name of newNames.slice(0, -1)) expect(await searchAll(org.workspaceKey, name)).toEqual([]);
    const stored = (
      await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: itemKey(renamed.id), ConsistentRead: true }))
    ).Item!;
    expect(stored.GSI6SK).toMatch(new RegExp(`^${newNames.at(-1)}\u0001`));
  });
});

describe(
  'GET /markups/search drives by its rarest word and checks the others on the whole record (issue 34 review)',
  { timeout: 180_000 },
  () => {
    it('finds a rare word next to a common, longer one in ONE request among 2,500 markups that share the common word', async () => {
      const org = await makeOrganization();
      const rare = 'zq7'; // Shorter than the common word; the workspace is this test's own.
      const workspace = (await getWorkspace(org.workspaceId))!;
      const parent = (await getItem(workspace.rootFolderId)) as FolderRecord;
      const at = Date.now() - 3_000_000;
      const records = Array.from({ length: 2501 }, (_, i) =>
        newWebpageMarkupRecord({
          placement: { workspace, parent },
          url: `https://example.com/r/${i}`,
          name: i === 0 ? `Release review ${rare}` : `Release review w${i} ${i}`,
          createdBy: randomUUID(),
          at: at + i * 1000,
        }),
      );
      await batchPut(records.map(settled).map(toItem));

      // The common word is the longer one: the old search drove by it and answered empty pages first.
      const response = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: `release ${rare}`, limit: 20 } });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({ data: [{ id: records[0]!.id }], hasMore: false, nextCursor: null });
      const number = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'release 7', limit: 100 } });
      expect(number.body.data.data.length).toBeGreaterThan(0);
      // Paging a union of drivers still lists every match once.
      const sevens = await searchAll(org.workspaceKey, 'release 77', { limit: 7 });
      const expected = records.filter((record) => /\b77/.test(record.name));
      expect(new Set(sevens)).toEqual(new Set(expected.map((record) => record.id)));
      expect(sevens).toHaveLength(expected.length);
    });

    it('counts a name word past the ten indexed ones and a URL fragment word as the other words of a query', async () => {
      const org = await makeOrganization();
      const words = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen'];
      const long = await createMarkup(org.workspaceKey, { name: words.join(' ') });
      const tag = uniqueWord('frag');
      const fragment = await createMarkup(org.workspaceKey, { name: `${tag} page`, url: 'https://example.com/product#reviews' });

      expect(await searchAll(org.workspaceKey, 'one eleven')).toEqual([long.id]);
      expect(await searchAll(org.workspaceKey, 'thirteen two')).toEqual([long.id]);
      expect(await searchAll(org.workspaceKey, `${tag} #reviews`)).toEqual([fragment.id]);
      expect(await searchAll(org.workspaceKey, 'reviews')).toEqual([fragment.id]);
    });

    it('folds case, accents and ß the same for names and queries: istanbul finds İstanbul, strasse Straße, cafe Café', async () => {
      const org = await makeOrganization();
      const istanbul = await createMarkup(org.workspaceKey, { name: 'İstanbul office' });
      const strasse = await createMarkup(org.workspaceKey, { name: 'Hauptstraße 5' });
      const cafe = await createMarkup(org.workspaceKey, { name: 'Café menu' });

      expect(await searchAll(org.workspaceKey, 'istanbul')).toEqual([istanbul.id]);
      expect(await searchAll(org.workspaceKey, 'İSTANBUL office')).toEqual([istanbul.id]);
      expect(await searchAll(org.workspaceKey, 'stanbul')).toEqual([]);
      expect(await searchAll(org.workspaceKey, 'hauptstrasse')).toEqual([strasse.id]);
      expect(await searchAll(org.workspaceKey, 'Hauptstraße')).toEqual([strasse.id]);
      expect(await searchAll(org.workspaceKey, 'cafe')).toEqual([cafe.id]);
    });

    it('refuses a cursor made for another workspace, another organization or another query (400)', async () => {
      const [org, stranger] = await Promise.all([makeOrganization(), makeOrganization()]);
      const other = await makeSecondWorkspace(org.orgKey);
      const word = uniqueWord('cur');
      for (const key of [org.workspaceKey, stranger.workspaceKey]) {
        await createMarkup(key, { name: `${word} a` });
        await createMarkup(key, { name: `${word} b` });
      }
      const first = await call('GET', '/markups/search', {
        key: org.orgKey,
        query: { query: word, limit: 1, workspaceId: org.workspaceId },
      });
      expect(first.body.data.hasMore).toBe(true);
      const before = first.body.data.nextCursor as string;

      expect(
        (await call('GET', '/markups/search', { key: org.orgKey, query: { query: word, limit: 1, before, workspaceId: org.workspaceId } }))
          .status,
      ).toBe(200);
      expect(
        (await call('GET', '/markups/search', { key: org.orgKey, query: { query: word, limit: 1, before, workspaceId: other.id } })).status,
      ).toBe(400);
      expect((await call('GET', '/markups/search', { key: stranger.workspaceKey, query: { query: word, limit: 1, before } })).status).toBe(
        400,
      );
      expect(
        (
          await call('GET', '/markups/search', {
            key: org.orgKey,
            query: { query: `${word} a`, limit: 1, before, workspaceId: org.workspaceId },
          })
        ).status,
      ).toBe(400);
    });
  },
);
