import { expect } from 'vitest';
import { call } from './api.js';

/** The markup's thread-related fields as GET /markups/:id answers them (200 asserted). */
export async function markupOf(key: string, markupId: string) {
  const response = await call('GET', `/markups/${markupId}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { activeThreads: number; readOnly: boolean };
}

/** Threads per view mode as GET /markups/:id/view-modes counts them (200 asserted). */
export async function viewModeCounts(key: string, markupId: string): Promise<Record<string, number>> {
  const response = await call('GET', `/markups/${markupId}/view-modes`, { key });
  expect(response.status).toBe(200);
  return Object.fromEntries(
    response.body.data.projectViewModes.map((mode: { id: string; threadCount: number }) => [mode.id, mode.threadCount]),
  );
}

/** One page of GET /threads (200 asserted). */
export async function listThreads(key: string, query: Record<string, string | number | boolean | undefined>) {
  const response = await call('GET', '/threads', { key, query });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as {
    threads: { id: string; number: number; [field: string]: unknown }[];
    query: { resolved: boolean | null };
    offset: number;
    total: number;
    cursorId: string | null;
  };
}

export const numbersOf = (threads: readonly { number: number }[]) => threads.map((thread) => thread.number);

/** One thread as GET /threads/:id answers it (200 asserted). */
export const getThread = async (key: string, threadId: string) => {
  const response = await call('GET', `/threads/${threadId}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
};
