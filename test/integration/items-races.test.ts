import { describe, expect, it } from 'vitest';
import { getItem, MAX_FOLDER_DEPTH } from '../../shared/db/items.js';
import { call } from '../support/api.js';
import { childNames, makeItemsWorkspace } from '../support/folder-items.js';
import { makeFolder, workspaceMarkupIds } from '../support/items.js';

const RUNS = 20;

/** The folder ids from `itemId` up through parentFolderId, as stored; throws when the walk goes round. */
async function parentChain(itemId: string): Promise<string[]> {
  const chain: string[] = [];
  let id: string | null = itemId;
  while (id) {
    if (chain.includes(id) || chain.length > MAX_FOLDER_DEPTH + 2) throw new Error(`cycle through ${chain.join(' -> ')} -> ${id}`);
    chain.push(id);
    const item = await getItem(id, true);
    id = item?.parentFolderId ?? null;
  }
  return chain;
}

describe('Crossing folder moves (X into Y while Y into X) never make a cycle', { timeout: 300_000 }, () => {
  it(`keeps both folders reachable from the root, ${RUNS} times, and deleting their old parent leaves nothing behind`, async () => {
    const ws = await makeItemsWorkspace();
    const statuses: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const parent = await makeFolder(ws.workspaceKey, ws.rootId, `Parent ${run}`);
      const [x, y] = await Promise.all(['X', 'Y'].map((name) => makeFolder(ws.workspaceKey, parent.id, name)));
      const markups = await Promise.all([ws.markup(x!.id, 'In X'), ws.markup(y!.id, 'In Y')]);

      const answers = await Promise.all([
        call('PATCH', `/items/${x!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: y!.id } }),
        call('PATCH', `/items/${y!.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: x!.id } }),
      ]);
      statuses.push(...answers.map((answer) => answer.status));

      expect(answers.map((answer) => answer.status).sort()).toSatisfy(
        (pair: number[]) => pair[0] === 200 && [409, 422].includes(pair[1]!),
        JSON.stringify(answers.map((answer) => answer.body)),
      );
      for (const folder of [x!, y!]) expect((await parentChain(folder.id)).at(-1)).toBe(ws.rootId);

      expect((await call('DELETE', `/items/${parent.id}`, { key: ws.workspaceKey })).status).toBe(204);
      for (const id of [x!.id, y!.id, ...markups.map((markup) => markup.id)]) expect(await getItem(id, true)).toBeUndefined();
      const listed = await workspaceMarkupIds(ws.workspaceId);
      for (const markup of markups) expect(listed.has(markup.id)).toBe(false);
    }
    console.info(`crossing moves, ${RUNS} runs: statuses ${JSON.stringify(countOf(statuses))}`);
    expect(await childNames(ws.workspaceKey, ws.rootId)).toEqual([]);
  });
});

describe('Parallel creation of folders with one name', { timeout: 300_000 }, () => {
  it(`gives ten parallel POST /items named "Same" ten distinct names, ${RUNS} times`, async () => {
    const ws = await makeItemsWorkspace();
    for (let run = 0; run < RUNS; run += 1) {
      const parent = await makeFolder(ws.workspaceKey, ws.rootId, `Parent ${run}`);

      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: parent.id, name: 'Same' } }),
        ),
      );

      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
      const created = answers.map((answer) => answer.body.data.name as string);
      expect(new Set(created.map((name) => name.toLowerCase())).size).toBe(10);
      expect((await childNames(ws.workspaceKey, parent.id)).sort()).toEqual([...created].sort());
    }
  });

  it(`gives five folders named "Notes" moved in parallel into one folder five distinct names, ${RUNS} times`, async () => {
    const ws = await makeItemsWorkspace();
    for (let run = 0; run < RUNS; run += 1) {
      const destination = await makeFolder(ws.workspaceKey, ws.rootId, `Destination ${run}`);
      const sources = await Promise.all(Array.from({ length: 5 }, (_, i) => makeFolder(ws.workspaceKey, ws.rootId, `Source ${run}-${i}`)));
      const notes = await Promise.all(sources.map((source) => makeFolder(ws.workspaceKey, source.id, 'Notes')));

      const answers = await Promise.all(
        notes.map((folder) =>
          call('PATCH', `/items/${folder.id}/move`, { key: ws.workspaceKey, body: { parentFolderId: destination.id } }),
        ),
      );

      expect(answers.map((answer) => answer.status)).toEqual(Array(5).fill(200));
      const moved = answers.map((answer) => answer.body.data.name as string);
      expect(new Set(moved.map((name) => name.toLowerCase())).size).toBe(5);
      expect((await childNames(ws.workspaceKey, destination.id)).sort()).toEqual([...moved].sort());
    }
  });

  it('lets only one of two parallel renames take a name (the other is a 409), and a released name is free again', async () => {
    const ws = await makeItemsWorkspace();
    for (let run = 0; run < RUNS; run += 1) {
      const parent = await makeFolder(ws.workspaceKey, ws.rootId, `Parent ${run}`);
      const [a, b] = await Promise.all(['A', 'B'].map((name) => makeFolder(ws.workspaceKey, parent.id, name)));

      const answers = await Promise.all(
        [a!, b!].map((folder) => call('PATCH', `/items/${folder.id}`, { key: ws.workspaceKey, body: { name: 'Taken' } })),
      );

      expect(answers.map((answer) => answer.status).sort()).toEqual([204, 409]);
      expect((await childNames(ws.workspaceKey, parent.id)).filter((name) => name === 'Taken')).toHaveLength(1);
    }
    const parent = await makeFolder(ws.workspaceKey, ws.rootId, 'Released');
    const first = await makeFolder(ws.workspaceKey, parent.id, 'Name');
    expect((await call('PATCH', `/items/${first.id}`, { key: ws.workspaceKey, body: { name: 'Other' } })).status).toBe(204);
    expect((await makeFolder(ws.workspaceKey, parent.id, 'Name')).name).toBe('Name');
    expect((await call('DELETE', `/items/${first.id}`, { key: ws.workspaceKey })).status).toBe(204);
    expect((await makeFolder(ws.workspaceKey, parent.id, 'Other')).name).toBe('Other');
  });
});

function countOf(values: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}
