import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { call } from './api.js';

/** Another workspace of the organization, created through the API with its organization key. */
export async function makeSecondWorkspace(
  orgKey: string,
  name = `Second ${randomUUID().slice(0, 6)}`,
): Promise<{ id: string; rootFolderId: string; archiveFolderId: string }> {
  const response = await call('POST', '/workspace', { key: orgKey, body: { name } });
  expect(response.status).toBe(201);
  return response.body.data;
}

/**
 * Markups counted against this month's allowance (the plan's and the bundle's), as GET
 * /markups/usage reports them to `key`: an organization key names the workspace, a workspace key
 * speaks for its own.
 */
export async function usedThisMonth(key: string, workspaceId?: string): Promise<number> {
  const response = await call('GET', '/markups/usage', { key, query: { workspaceId } });
  return (response.body.data.used as number) + (response.body.data.bundleUsed as number);
}

/** Bytes stored per category, as GET /workspace/storage-breakdown reports them to `key`. */
export async function storageBreakdownOf(key: string): Promise<Record<string, number>> {
  const response = await call('GET', '/workspace/storage-breakdown', { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/**
 * Polls the storage breakdown until its `originals` bytes reach `bytes` (archiving runs as a worker
 * job after the request has answered), or the deadline; answers the last breakdown read.
 */
export async function waitForOriginalBytes(key: string, bytes: number, timeoutMs = 15_000): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const breakdown = await storageBreakdownOf(key);
    if (breakdown.originals === bytes || Date.now() > deadline) return breakdown;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
