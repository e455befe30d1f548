import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { ConsumedCapacity } from '@aws-sdk/client-dynamodb';
import { handler as markupsHandler } from '../functions/markups/handler.js';
import { markupsRoutes } from '../functions/markups/routes.js';
import type { StackInfo } from '../infra/local/stack.js';
import { getDb } from '../shared/clients.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../shared/config.js';
import { getItem, itemKey, toItem, type FolderRecord } from '../shared/db/items.js';
import { scanWorkspaceMarkups } from '../shared/db/markup-search.js';
import { WORD_KEY_ATTRIBUTES, WORD_SLOTS, wordIndex } from '../shared/db/markup-words.js';
import { batchPut } from '../shared/db/core/transact.js';
import { getWorkspace } from '../shared/db/workspaces.js';
import { newWebpageMarkupRecord } from '../shared/domain/markups/create.js';
import { invokeHandler } from '../test/support/request-count.js';
import { formatRow, measure, type Measurement } from './measure.js';

/** The word index's GSIs: what this issue adds to a write, told apart in `ReturnConsumedCapacity: INDEXES`. */
const WORD_INDEXES = new Set(Array.from({ length: WORD_SLOTS }, (_, i) => wordIndex(i + 1).name));
const WORDS = ['alpha', 'banner', 'checkout', 'design', 'email', 'footer', 'gallery', 'header', 'invoice', 'journey', 'kiosk', 'landing'];

interface WriteCost {
  calls: number;
  units: number;
  tableUnits: number;
  wordIndexUnits: number;
}

const costing = new AsyncLocalStorage<{ calls: number; capacity: ConsumedCapacity[] }>();
let instrumented = false;

/** DynamoDB calls and consumed capacity (table and every index) of what `operation` does in this process. */
async function costOf(operation: () => Promise<void>): Promise<WriteCost> {
  if (!instrumented) {
    instrumented = true;
    getDb().middlewareStack.add(
      (next) => async (args) => {
        const store = costing.getStore();
        if (!store) return next(args);
        store.calls += 1;
        (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'INDEXES';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] }).ConsumedCapacity;
        if (consumed) store.capacity.push(...(Array.isArray(consumed) ? consumed : [consumed]));
        return result;
      },
      { step: 'initialize', name: 'benchConsumedCapacity' },
    );
  }
  const store = { calls: 0, capacity: [] as ConsumedCapacity[] };
  await costing.run(store, operation);
  const units = store.capacity.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
  const wordIndexUnits = store.capacity.reduce(
    (sum, entry) =>
      sum +
      Object.entries(entry.GlobalSecondaryIndexes ?? {}).reduce(
        (inner, [name, index]) => inner + (WORD_INDEXES.has(name) ? (index.CapacityUnits ?? 0) : 0),
        0,
      ),
    0,
  );
  const tableUnits = store.capacity.reduce((sum, entry) => sum + (entry.Table?.CapacityUnits ?? 0), 0);
  return { calls: store.calls, units, tableUnits, wordIndexUnits };
}

/**
 * Issue 34's rows: a page of GET /markups and a rare-name GET /markups/search on workspaces of
 * growing size, in the same run (the bar: each within 1.5x of the 50-markup figure, the search
 * answered in one request), beside the old search (the budgeted scan of the workspace's markups,
 * cursors followed to the match); then the DynamoDB calls and capacity of a create and a rename.
 * Markups are written straight to the table with the create path's record builder (`batchPut`).
 */
export async function benchSearch(stack: StackInfo, options: { durationMs: number; sizes?: number[] }): Promise<Measurement[]> {
  const sizes = options.sizes ?? [50, 5_000, 50_000];
  const key = stack.organizationApiKey;
  const markups = { name: 'markups', routes: markupsRoutes, handler: markupsHandler };
  const call = async (method: string, path: string, request: { query?: Record<string, string | number>; body?: unknown } = {}) => {
    const response = await invokeHandler(markups, method, path, { key, ...request });
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.body)}`);
    return response.body as { data: any };
  };
  const workspaceFor = async (name: string) => {
    const response = await fetch(`${stack.baseUrl}/api/v2/workspace`, {
      method: 'POST',
      headers: { 'Service-API-Version': '2023-02-22', 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify({ name }),
    });
    if (!response.ok) throw new Error(`POST /workspace answered ${response.status}`);
    return ((await response.json()) as { data: { id: string } }).data.id;
  };

  const workspaces: { size: number; workspaceId: string; rareName: string }[] = [];
  for (const size of sizes) {
    const workspaceId = await workspaceFor(`Search bench ${size} ${randomUUID().slice(0, 6)}`);
    const workspace = (await getWorkspace(workspaceId))!;
    const parent = (await getItem(workspace.rootFolderId)) as FolderRecord;
    const rareName = `Zephyrine ${randomUUID().slice(0, 8)} review`;
    const at = Date.now() - size * 1000;
    // The rare markup is the oldest: the old search reads the whole workspace before it.
    const records = Array.from({ length: size }, (_, i) =>
      newWebpageMarkupRecord({
        placement: { workspace, parent },
        url: `https://www.example.com/${WORDS[i % WORDS.length]}/page-${i}`,
        name: i === 0 ? rareName : `${WORDS[(i * 7) % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]} page ${i}`,
        createdBy: randomUUID(),
        at: at + i * 1000,
      }),
    );
    const started = performance.now();
    // batchPut keeps 8 BatchWrites in flight; four of them side by side keep DynamoDB Local's threads busy.
    // No work left for the workers (thumbnail given up): out of the pending-work index, so no sweep queues 50,000 renders.
    const items = records.map((record) => toItem({ ...record, thumbnailState: 'unavailable' }));
    const quarter = Math.ceil(items.length / 4);
    await Promise.all([0, 1, 2, 3].map((part) => batchPut(items.slice(part * quarter, (part + 1) * quarter))));
    const loadMs = performance.now() - started;
    process.stdout.write(`loaded ${size.toLocaleString('en-US')} markups (batchPut) in ${(loadMs / 1000).toFixed(1)} s\n`);
    workspaces.push({ size, workspaceId, rareName });
  }
  process.stdout.write('\n');

  const results: Measurement[] = [];
  const row = async (name: string, operation: () => Promise<void>) => {
    const result = await measure(name, operation, { durationMs: options.durationMs, concurrency: 1, warmup: 40 });
    results.push(result);
    process.stdout.write(`${formatRow(result)}\n`);
    return result;
  };
  const lists: Measurement[] = [];
  const searches: Measurement[] = [];
  for (const { size, workspaceId, rareName } of workspaces) {
    const label = size.toLocaleString('en-US');
    lists.push(
      await row(`GET /markups page of 50 on ${label}`, async () => {
        const { data } = await call('GET', '/markups', { query: { workspaceId, limit: 50 } });
        if (data.data.length !== Math.min(50, size)) throw new Error(`a page of ${data.data.length}`);
      }),
    );
    searches.push(
      await row(`GET /markups/search rare name on ${label}`, async () => {
        const { data } = await call('GET', '/markups/search', {
          query: { workspaceId, query: rareName.split(' ')[0]!.toLowerCase(), limit: 50 },
        });
        if (data.data.length !== 1 || data.data[0].name !== rareName || data.hasMore)
          throw new Error(`the search answered ${JSON.stringify(data).slice(0, 300)}`);
      }),
    );
  }
  for (const [name, measured] of [
    ['GET /markups', lists],
    ['GET /markups/search', searches],
  ] as const) {
    process.stdout.write(
      `${`  ${name}: largest to smallest at p50`.padEnd(44)} ${(measured.at(-1)!.p50 / measured[0]!.p50).toFixed(2)}x\n`,
    );
  }

  process.stdout.write(
    "\nThe old search (a filtered read of the workspace's markups, 5,000 items a request), cursors followed to the rare name, once\n\n",
  );
  for (const { size, workspaceId, rareName } of workspaces) {
    const started = performance.now();
    let requests = 0;
    let before: string | undefined;
    let found = 0;
    do {
      const page = await scanWorkspaceMarkups(workspaceId, { text: rareName.split(' ')[0]!, limit: 50, before });
      requests += 1;
      found += page.items.length;
      before = page.nextCursor ?? undefined;
    } while (before);
    const took = performance.now() - started;
    process.stdout.write(
      `${`old search, rare name on ${size.toLocaleString('en-US')}`.padEnd(44)} ${requests} request(s), ${took.toFixed(0)} ms in all, found ${found}\n`,
    );
  }

  process.stdout.write(
    "\nWrite cost (ReturnConsumedCapacity INDEXES, as DynamoDB Local counts it): the word index (GSI6-GSI15) adds no call, only its index writes and the item's word keys\n\n",
  );
  const workspaceId = workspaces[0]!.workspaceId;
  let createdId = '';
  const create = await costOf(async () => {
    createdId = (
      await call('POST', '/markups/url', {
        body: { workspaceId, url: 'https://www.example.com/pricing/plans?ref=launch', name: 'Spring launch pricing page' },
      })
    ).data.id;
  });
  const rename = await costOf(async () => {
    await call('POST', `/markups/${createdId}`, { body: { name: 'Autumn relaunch pricing overview' } });
  });
  for (const [name, cost] of [
    ['create (POST /markups/url)', create],
    ['rename (POST /markups/{id})', rename],
  ] as const) {
    process.stdout.write(
      `${name.padEnd(44)} ${cost.calls} DynamoDB calls   ${cost.units.toFixed(1)} capacity units: tables ${cost.tableUnits.toFixed(1)}, GSI1-GSI5 ${(cost.units - cost.tableUnits - cost.wordIndexUnits).toFixed(1)}, word index ${cost.wordIndexUnits.toFixed(1)}\n`,
    );
  }
  const stored = (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: itemKey(createdId), ConsistentRead: true })))
    .Item!;
  const sizeOf = (item: Record<string, unknown>) =>
    Object.entries(item).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(JSON.stringify(value)), 0);
  const wordKeys = Object.fromEntries(Object.entries(stored).filter(([name]) => WORD_KEY_ATTRIBUTES.includes(name)));
  process.stdout.write(
    `${'the renamed markup item (about)'.padEnd(44)} ${sizeOf(stored)} bytes, of which word keys ${sizeOf(wordKeys)} (${Object.keys(wordKeys).length - 1} words)\n`,
  );
  return results;
}
