import type { BoardState } from './store.js';
import type { Markup, Thread } from './types.js';

/** The board's pure rules, shared by the components and checked by unit tests (no DOM here). */

/** The threads the filter shows, by number: what both the pins and the list render. */
export function visibleThreads(state: Pick<BoardState, 'threads' | 'filter'>): Thread[] {
  if (state.filter === 'all') return state.threads;
  return state.threads.filter((thread) => thread.resolved === (state.filter === 'resolved'));
}

/** The list in the chosen order (pins do not move): number; latest activity first; or place (page, image, time), then number. */
export function orderThreads(threads: readonly Thread[], order: BoardState['order'], imageIds: readonly string[] = []): Thread[] {
  const sorted = [...threads];
  if (order === 'activity') return sorted.sort((a, b) => (b.lastActivityAt ?? b.createdAt) - (a.lastActivityAt ?? a.createdAt) || a.number - b.number);
  if (order === 'position') {
    const place = (thread: Thread) => thread.pageNumber ?? thread.startTime ?? Math.max(0, imageIds.indexOf(thread.projectImageId ?? imageIds[0] ?? ''));
    return sorted.sort((a, b) => place(a) - place(b) || a.number - b.number);
  }
  return sorted.sort((a, b) => a.number - b.number);
}

/** A video thread's pin shows while the time is within its range; a point range (end = start) for half a second. */
export function showsAt(thread: Pick<Thread, 'startTime' | 'endTime'>, seconds: number): boolean {
  const start = thread.startTime ?? 0;
  const end = Math.max(thread.endTime ?? start, start);
  return seconds >= start - 0.05 && seconds <= (end > start ? end : start + 0.5) + 0.05;
}

/** How long a comment made on a video lasts from the current time (clipped to the video's end). */
export const VIDEO_COMMENT_SECONDS = 3;

/** The range of a comment made at `current` seconds of a video `duration` seconds long. */
export function videoRange(current: number, duration: number): { startTime: number; endTime: number } {
  const startTime = round(clamp(current, 0, duration));
  return { startTime, endTime: round(Math.min(duration, startTime + VIDEO_COMMENT_SECONDS)) };
}

export const round = (value: number) => Math.round(value * 100) / 100;
export const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** A point inside a box, in percentages of it (0-100, two decimals). */
export function percentOf(point: { x: number; y: number }, box: { left: number; top: number; width: number; height: number }): [number, number] {
  if (box.width <= 0 || box.height <= 0) return [50, 50];
  return [round(clamp(((point.x - box.left) / box.width) * 100, 0, 100)), round(clamp(((point.y - box.top) / box.height) * 100, 0, 100))];
}

/** A media time as m:ss.t (comments sit on tenths of a second). */
export const formatTime = (seconds: number) => `${Math.floor(seconds / 60)}:${(seconds % 60).toFixed(1).padStart(4, '0')}`;

/** True when the caller has not seen the thread or one of its messages since it last changed. */
export const isUnread = (thread: Pick<Thread, 'read' | 'unreadMessageCount'>) => thread.read === false || (thread.unreadMessageCount ?? 0) > 0;

/** Why new comments are refused on this markup, or undefined when they are not. */
export function refusalOf(markup: Pick<Markup, 'readOnly' | 'scopes' | 'type'>): string | undefined {
  if (markup.readOnly) return 'Comments are paused on this markup: you can read them, but nobody can add comments or replies until they are resumed.';
  if (markup.scopes && !markup.scopes.includes('create-thread')) return 'Your role in this workspace can read comments but not add them.';
  if (markup.type === 'webpage') { return 'Comments on a webpage are placed on its elements; the service renders only a thumbnail of the page, not a full-page screenshot, so they cannot be placed here yet.'; }
  return undefined;
}
