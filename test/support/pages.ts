import { expect } from 'vitest';
import { call } from './api.js';

/**
 * Every page of a forward-only list (`{ data: { data, hasMore, nextCursor } }`, next page
 * `before=<nextCursor>`), checking each page's keys and that `hasMore` agrees with the cursor.
 */
export async function forwardPages<T>(path: string, key: string, query: Record<string, string | number> = {}): Promise<T[][]> {
  const pages: T[][] = [];
  let before: string | undefined;
  do {
    const response = await call('GET', path, { key, query: { ...query, before } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body.data).sort()).toEqual(['data', 'hasMore', 'nextCursor']);
    pages.push(response.body.data.data);
    before = response.body.data.nextCursor ?? undefined;
    expect(response.body.data.hasMore).toBe(before !== undefined);
  } while (before);
  return pages;
}
