import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../shared/clients.js';
import { getConfig } from '../shared/config.js';
import { apiKeyKey } from '../shared/db/api-keys.js';
import { fromItem, itemKey, type MarkupRecord } from '../shared/db/items.js';
import { createWorkspaceKey } from '../shared/domain/organizations.js';
import type { StackInfo } from '../infra/local/stack.js';
import { seedConversation } from '../test/support/thread-seed.js';
import { formatRow, measure, type Measurement } from './measure.js';

export interface ThreadPagesOptions {
  durationMs: number;
  /** Threads per markup, one markup each (default 50, 2,000, 10,000). */
  sizes?: number[];
  /** 'old': markups without the thread index (written before it), listed by reading them whole. */
  layout?: 'old' | 'indexed';
}

/**
 * GET /threads page of 50 (default order) on markups of growing size, threads of three messages
 * (the opening one and two replies) seeded with batch writes, one caller at a time so a row is
 * latency. The bar: the largest markup's p50 within 1.5x of the smallest's.
 */
export async function benchThreadPages(stack: StackInfo, options: ThreadPagesOptions): Promise<Measurement[]> {
  const sizes = options.sizes ?? [50, 2000, 10000];
  const TableName = getConfig().tableName;
  const userOf = async (apiKey: string) =>
    (await getDb().send(new GetCommand({ TableName, Key: apiKeyKey(apiKey.split('_')[1]!) }))).Item!.userId as string;
  const others = await Promise.all(
    ['second', 'third'].map(async (name) => (await createWorkspaceKey(stack.workspaceId, { email: `pages-${name}-${randomUUID()}@example.com`, role: 'contributor' })).apiKey),
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
  const markups: { size: number; markupId: string }[] = [];
  for (const size of sizes) {
    const { id } = (await call('POST', '/markups/url', { url: `https://example.com/pages-${size}-${randomUUID()}` })).data;
    const markup = fromItem((await getDb().send(new GetCommand({ TableName, Key: itemKey(id), ConsistentRead: true }))).Item!) as MarkupRecord;
    await seedConversation(markup, { count: size, authorIds, layout: options.layout, readBy: authorIds[0] });
    markups.push({ size, markupId: id });
  }
  const results: Measurement[] = [];
  for (const { size, markupId } of markups) {
    const request = async () => {
      const { data } = await call('GET', `/threads?markupId=${markupId}&limit=50`);
      if (data.threads.length !== 50 || data.total !== size) throw new Error(`page of ${data.threads.length}, total ${data.total} on ${size} threads`);
    };
    const result = await measure(`GET /threads page of 50 on ${size.toLocaleString('en-US')} threads${options.layout === 'old' ? ' (old layout)' : ''}`, request, {
      durationMs: options.durationMs,
      concurrency: 1,
      warmup: 5,
    });
    results.push(result);
    process.stdout.write(`${formatRow(result)}\n`);
  }
  const [first, last] = [results[0]!, results.at(-1)!];
  process.stdout.write(`${'  largest to smallest at p50'.padEnd(44)} ${(last.p50 / first.p50).toFixed(2)}x\n`);
  return results;
}
