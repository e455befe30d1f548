import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler as threadsHandler } from '../functions/threads/handler.js';
import { threadsRoutes } from '../functions/threads/routes.js';
import { getDb } from '../shared/clients.js';
import { getConfig } from '../shared/config.js';
import { apiKeyKey } from '../shared/db/api-keys.js';
import { fromItem, itemKey, type MarkupRecord } from '../shared/db/items.js';
import { getReadMarks, getReadMarksOfPage } from '../shared/db/read-marks.js';
import { getThreadIndexState, readPageCopies } from '../shared/db/thread-index.js';
import { getUnreadCountStates } from '../shared/db/unread-counts.js';
import { countUnreadThreads } from '../shared/domain/comments/unread-counts.js';
import { ORDER_PLANS } from '../shared/domain/comments/thread-pages.js';
import { DEFAULT_THREAD_ORDER } from '../shared/domain/comments/thread-selection.js';
import { getConversation } from '../shared/db/threads.js';
import { getUsers } from '../shared/db/users.js';
import { workspaceKey } from '../shared/db/workspaces.js';
import { createWorkspaceKey } from '../shared/domain/organizations/organizations.js';
import type { StackInfo } from '../infra/local/stack.js';
import { countRequests, invokeHandler } from '../test/support/request-count.js';
import { seedConversation } from '../test/support/thread-seed.js';
import { formatRow, measure, type Measurement } from './measure.js';

export interface ThreadPagesOptions {
  durationMs: number;
  /** Threads per markup, one markup each (default 50, 2,000, 10,000). */
  sizes?: number[];
}

/** What one page costs DynamoDB: calls by command and the read units DynamoDB reports for them. */
export interface PageCost {
  calls: number;
  byCommand: Record<string, number>;
  readUnits: number;
}

const capacity = new AsyncLocalStorage<{ units: number }>();
const withCapacity = new WeakSet<object>();

/**
 * Asks DynamoDB for the consumed capacity of every call made inside `capacity.run` (and only
 * those: the measured rows run without it) and adds it up: DynamoDB's own count of read units,
 * not an estimate.
 */
function instrumentCapacity(): void {
  const client = getDb();
  if (withCapacity.has(client)) return;
  withCapacity.add(client);
  client.middlewareStack.add(
    (next) => async (args) => {
      const store = capacity.getStore();
      if (!store) return next(args);
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      for (const entry of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) store.units += entry.CapacityUnits ?? 0;
      return result;
    },
    { step: 'initialize', name: 'benchConsumedCapacity' },
  );
}

/** The median cost of `runs` runs of `operation` (counted apart from the timed ones). */
async function costOf(operation: () => Promise<unknown>, runs = 9): Promise<PageCost> {
  instrumentCapacity();
  const costs: PageCost[] = [];
  for (let run = 0; run < runs; run += 1) {
    const store = { units: 0 };
    const counted = await capacity.run(store, () => countRequests(operation));
    costs.push({ calls: counted.total, byCommand: counted.counts, readUnits: store.units });
  }
  costs.sort((a, b) => a.readUnits - b.readUnits || a.calls - b.calls);
  return costs[Math.floor(costs.length / 2)]!;
}

function formatCost(cost: PageCost): string {
  const commands = Object.entries(cost.byCommand)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([command, count]) => `${count} ${command.replace(/Command$/, '').replace(/Item$/, '')}`)
    .join(', ');
  return `${''.padEnd(44)} ${String(cost.calls).padStart(3)} DynamoDB calls a page (${commands}), ${cost.readUnits.toFixed(1)} read units`;
}

/**
 * The DynamoDB floor of GET /threads' default page of 50 on a layout 4 markup: the calls the request
 * makes, straight on the client, as side by side as the request makes them (the API key; then the
 * markup, the key's workspace and the index counters; the page copies; then the caller's marks on
 * them beside their authors). No HTTP, no views. Both bench sections measure the page against it.
 */
export async function defaultThreadPageFloor(page: { keyId: string; markupId: string; workspaceId: string; readerId: string }) {
  const TableName = getConfig().tableName;
  const get = (Key: Record<string, string>) => getDb().send(new GetCommand({ TableName, Key }));
  await get(apiKeyKey(page.keyId));
  await Promise.all([get(itemKey(page.markupId)), get(workspaceKey(page.workspaceId)), getThreadIndexState(page.markupId)]);
  const plan = ORDER_PLANS[DEFAULT_THREAD_ORDER];
  const { threads: copies } = await readPageCopies(page.markupId, { limit: 51, backward: plan.backward });
  const threads = copies.slice(0, 50);
  if (threads.length !== 50 || threads.some((thread) => thread.messages === undefined)) throw new Error('the floor read no page of copies');
  await Promise.all([
    getReadMarksOfPage(
      page.markupId,
      page.readerId,
      threads.map((thread) => ({ id: thread.id, number: thread.number })),
    ),
    getUsers([...new Set(threads.flatMap((thread) => [thread.userId, ...thread.messages!.map((message) => message.userId)]))]),
  ]);
}

/**
 * GET /threads page of 50 (default order) on markups of growing size, threads of three messages
 * (the opening one and two replies) seeded with batch writes, one caller at a time so a row is
 * latency; under each row, the page's DynamoDB calls and read units (the same handler run in this
 * process, so its calls can be counted; DynamoDB Local's ConsumedCapacity). Beside them, in the
 * same run, the reference: the old layout's page on a 50-thread markup as its DynamoDB floor (the
 * calls that page made, straight on the client: the API key, markup and workspace, the index
 * counters, then the whole conversation beside the caller's read marks, then the authors; no HTTP,
 * no views, so it is below what that page cost), and today's page on the largest markup as its
 * DynamoDB floor the same way, so floor compares with floor. Issue 33's bar: every size at or under
 * the reference.
 */
export async function benchThreadPages(stack: StackInfo, options: ThreadPagesOptions): Promise<Measurement[]> {
  const sizes = options.sizes ?? [50, 2000, 10000];
  const TableName = getConfig().tableName;
  const userOf = async (apiKey: string) =>
    (await getDb().send(new GetCommand({ TableName, Key: apiKeyKey(apiKey.split('_')[1]!) }))).Item!.userId as string;
  const others = await Promise.all(
    ['second', 'third'].map(
      async (name) =>
        (await createWorkspaceKey(stack.workspaceId, { email: `pages-${name}-${randomUUID()}@example.com`, role: 'contributor' })).apiKey,
    ),
  );
  const authorIds = await Promise.all([stack.workspaceApiKey, ...others].map(userOf));
  const headers = { Authorization: `Bearer ${stack.workspaceApiKey}`, 'Service-API-Version': '2023-02-22' };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.baseUrl}/api/v2${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<{ data: any }>;
  };
  const seeded = async (size: number, layout: 'old' | 'current') => {
    const { id } = (await call('POST', '/markups/url', { url: `https://example.com/pages-${size}-${randomUUID()}` })).data;
    const markup = fromItem(
      (await getDb().send(new GetCommand({ TableName, Key: itemKey(id), ConsistentRead: true }))).Item!,
    ) as MarkupRecord;
    await seedConversation(markup, { count: size, authorIds, layout, readBy: authorIds[0] });
    return markup;
  };
  const markups: { size: number; markupId: string }[] = [];
  for (const size of sizes) markups.push({ size, markupId: (await seeded(size, 'current')).id });
  const old = await seeded(50, 'old');

  const results: Measurement[] = [];
  const row = (result: Measurement, cost: PageCost) => {
    results.push(result);
    process.stdout.write(`${formatRow(result)}\n${formatCost(cost)}\n`);
  };
  const check = (data: any, size: number) => {
    if (data.threads.length !== 50 || data.total !== size)
      throw new Error(`page of ${data.threads.length}, total ${data.total} on ${size} threads`);
  };
  for (const { size, markupId } of markups) {
    const request = async () => check((await call('GET', `/threads?markupId=${markupId}&limit=50`)).data, size);
    const result = await measure(`GET /threads page of 50 on ${size.toLocaleString('en-US')} threads`, request, {
      durationMs: options.durationMs,
      concurrency: 1,
      warmup: 5,
    });
    const cost = await costOf(async () => {
      const response = await invokeHandler({ name: 'threads', routes: threadsRoutes, handler: threadsHandler }, 'GET', '/threads', {
        key: stack.workspaceApiKey,
        query: { markupId, limit: 50 },
      });
      check(response.body.data, size);
    });
    row(result, cost);
  }

  // A listing's unread count of a markup whose cached count is stale (any thread write since): the
  // recount, by size, beside the recount from the whole conversation (every markup's before page
  // copies, and still an older markup's): sampled up to 2,000 threads, timed once above (it takes
  // tens of seconds there). The reader marked a third of the threads and wrote a third of the messages.
  const reader = authorIds[0]!;
  for (const { size, markupId } of markups) {
    const [state] = await getUnreadCountStates([markupId], reader);
    const recount = () => countUnreadThreads(state!, reader);
    const fromConversation = () => countUnreadThreads({ ...state!, layout: undefined }, reader);
    const label = size.toLocaleString('en-US');
    const counted = await recount();
    const runs = { durationMs: options.durationMs, concurrency: 1, warmup: 1 };
    const result = await measure(`unread recount on ${label} threads (${counted} unread)`, async () => void (await recount()), runs);
    row(result, await costOf(recount, 3));
    let referenceMs: number;
    if (size <= 2000) {
      if ((await fromConversation()) !== counted) throw new Error(`the two recounts differ on ${label} threads`);
      const reference = await measure(
        `reference: recount from the conversation on ${label}`,
        async () => void (await fromConversation()),
        runs,
      );
      row(reference, await costOf(fromConversation, 3));
      referenceMs = reference.p50;
    } else {
      const started = performance.now();
      if ((await fromConversation()) !== counted) throw new Error(`the two recounts differ on ${label} threads`);
      referenceMs = performance.now() - started;
      process.stdout.write(`${`reference: recount from the conversation on ${label}`.padEnd(44)} one run ${referenceMs.toFixed(0)} ms\n`);
    }
    process.stdout.write(`${`  recount to the conversation's on ${label}`.padEnd(44)} ${(result.p50 / referenceMs).toFixed(2)}x\n`);
  }

  const keyId = stack.workspaceApiKey.split('_')[1]!;
  const get = (Key: Record<string, string>) => getDb().send(new GetCommand({ TableName, Key }));
  const oldPage = async () => {
    await get(apiKeyKey(keyId));
    await get(itemKey(old.id));
    await get(workspaceKey(old.workspaceId));
    await getThreadIndexState(old.id);
    const [conversation] = await Promise.all([getConversation(old.id), getReadMarks(old.id, authorIds[0]!)]);
    if (conversation.threads.length !== 50) throw new Error(`the reference read ${conversation.threads.length} threads`);
    await getUsers([...new Set([...conversation.messages.values()].flat().map((message) => message.userId))]);
  };
  // The same page of today's layout as its DynamoDB floor, on the largest markup.
  const largest = markups.at(-1)!;
  const largeMarkup = (await getDb().send(new GetCommand({ TableName, Key: itemKey(largest.markupId), ConsistentRead: true }))).Item!;
  const newPage = () =>
    defaultThreadPageFloor({ keyId, markupId: largest.markupId, workspaceId: largeMarkup.workspaceId as string, readerId: authorIds[0]! });
  const floor = await measure(`floor: page of 50 on ${largest.size.toLocaleString('en-US')} threads`, newPage, {
    durationMs: options.durationMs,
    concurrency: 1,
    warmup: 5,
  });
  const reference = await measure('reference: old layout page of 50 on 50, floor', oldPage, {
    durationMs: options.durationMs,
    concurrency: 1,
    warmup: 5,
  });
  row(floor, await costOf(newPage));
  row(reference, await costOf(oldPage));
  const worst = results.slice(0, sizes.length).reduce((a, b) => (b.p50 > a.p50 ? b : a));
  process.stdout.write(`${'  slowest size to the reference at p50'.padEnd(44)} ${(worst.p50 / reference.p50).toFixed(2)}x\n`);
  process.stdout.write(`${"  today's floor to the reference at p50".padEnd(44)} ${(floor.p50 / reference.p50).toFixed(2)}x\n`);
  // What the request adds to its own DynamoDB calls (gateway, authentication, views, JSON), which
  // the reference, a floor, does not pay: the largest page's p50 less its floor's.
  const largestRow = results[sizes.length - 1]!;
  process.stdout.write(
    `${'  the request beyond its calls (largest size)'.padEnd(44)} ${(largestRow.p50 - floor.p50).toFixed(1)} ms (p50 ${largestRow.p50.toFixed(1)} - ${floor.p50.toFixed(1)} ms)\n`,
  );
  return results;
}
