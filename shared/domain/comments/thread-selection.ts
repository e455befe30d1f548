import type { MarkupRecord } from '../../db/items.js';
import { threadPage } from '../../db/thread-index.js';
import type { ThreadRecord } from '../../db/threads.js';
import { VIEW_MODES, type ViewModeCategory } from '../markups/view-modes.js';

/** Enumerations: ThreadOrder. */
export const THREAD_ORDERS = ['page', 'pin_asc', 'pin_desc', 'activity', 'timestamp', 'priority_asc', 'priority_desc'] as const;
export type ThreadOrder = (typeof THREAD_ORDERS)[number];
export const DEFAULT_THREAD_ORDER: ThreadOrder = 'pin_asc';

/** Sorts last in ascending order: threads without a page, a media time or a priority. */
const LAST = Number.MAX_SAFE_INTEGER;

/**
 * The position of a thread in an order, as a tuple compared left to right, ascending: the orders of
 * GET /threads as the spec words them. The thread index (`db/thread-index.ts`, `positionIn`) encodes
 * them as sort keys, and its unit test checks it sorts threads exactly as these tuples do. Every
 * tuple ends with the thread number, unique in a markup, so the order is total.
 *
 * - `page`: page of a PDF, position of the image in a multi-image markup, then pin number.
 * - `pin_asc` / `pin_desc`: pin number.
 * - `activity`: latest activity (a new or edited message, resolve, move) first.
 * - `timestamp`: media time (`startTime` of video and animated-image threads), earliest first;
 *   threads without one follow, by pin number.
 * - `priority_asc` / `priority_desc`: priority; threads without a priority follow, by pin number.
 */
export function positionOf(thread: ThreadRecord, order: ThreadOrder, markup: MarkupRecord): number[] {
  switch (order) {
    case 'page':
      return [threadPage(thread, markup), thread.number];
    case 'pin_asc':
      return [thread.number];
    case 'pin_desc':
      return [-thread.number];
    case 'activity':
      return [-thread.lastActivityAt, -thread.number];
    case 'timestamp':
      return [thread.startTime ?? LAST, thread.number];
    case 'priority_asc':
      return [thread.priority ?? LAST, thread.number];
    case 'priority_desc':
      return [thread.priority === null ? 1 : 0, -(thread.priority ?? 0), thread.number];
  }
}

export function comparePositions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

export interface ThreadFilter {
  resolved?: boolean;
  /** A view mode id or a ViewModeCategory (`desktop`, `tablet`, `mobile`). */
  viewMode?: string;
  /** Text that some message of the thread contains (case-insensitive). */
  q?: string;
}

/** View mode ids a `viewMode` filter names, or undefined when it names none. */
export function viewModeIdsOf(viewMode: string): Set<string> | undefined {
  const byCategory = VIEW_MODES.filter((mode) => mode.category === (viewMode as ViewModeCategory));
  if (byCategory.length > 0) return new Set(byCategory.map((mode) => mode.id));
  return VIEW_MODES.some((mode) => mode.id === viewMode) ? new Set([viewMode]) : undefined;
}
