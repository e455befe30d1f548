import type { BoardState } from './store.js';
import type { Markup, PageBox, PageLayout, Thread } from './types.js';

/** The board's pure rules, shared by the components and checked by unit tests (no DOM here). */

/** The threads the filter shows, by number: what both the pins and the list render. */
export function visibleThreads(state: Pick<BoardState, 'threads' | 'filter'>): Thread[] {
  if (state.filter === 'all') return state.threads;
  return state.threads.filter((thread) => thread.resolved === (state.filter === 'resolved'));
}

/** The list in the chosen order (pins do not move): number; latest activity first; or place (page, image, time), then number. */
export function orderThreads(threads: readonly Thread[], order: BoardState['order'], imageIds: readonly string[] = []): Thread[] {
  const sorted = [...threads];
  if (order === 'activity')
    return sorted.sort((a, b) => (b.lastActivityAt ?? b.createdAt) - (a.lastActivityAt ?? a.createdAt) || a.number - b.number);
  if (order === 'position') {
    const place = (thread: Thread) =>
      thread.pageNumber ?? thread.startTime ?? Math.max(0, imageIds.indexOf(thread.projectImageId ?? imageIds[0] ?? ''));
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
export function percentOf(
  point: { x: number; y: number },
  box: { left: number; top: number; width: number; height: number },
): [number, number] {
  if (box.width <= 0 || box.height <= 0) return [50, 50];
  return [round(clamp(((point.x - box.left) / box.width) * 100, 0, 100)), round(clamp(((point.y - box.top) / box.height) * 100, 0, 100))];
}

/** A media time as m:ss.t (comments sit on tenths of a second). */
export const formatTime = (seconds: number) => `${Math.floor(seconds / 60)}:${(seconds % 60).toFixed(1).padStart(4, '0')}`;

/** True when the caller has not seen the thread or one of its messages since it last changed. */
export const isUnread = (thread: Pick<Thread, 'read' | 'unreadMessageCount'>) =>
  thread.read === false || (thread.unreadMessageCount ?? 0) > 0;

/** Why new comments are refused on this markup, or undefined when they are not. */
/**
 * True when the caller's role may not comment at all (a viewer): "Add comment" is then not shown,
 * only why. A read-only markup drops `create-thread` for everyone; there the button stays, disabled,
 * with the pause as the reason.
 */
export const roleCannotComment = (markup: Pick<Markup, 'scopes' | 'readOnly'>): boolean =>
  !markup.readOnly && markup.scopes !== undefined && !markup.scopes.includes('create-thread');

export function refusalOf(markup: Pick<Markup, 'readOnly' | 'scopes' | 'type'>): string | undefined {
  if (markup.readOnly)
    return 'Comments are paused on this markup: you can read them, but nobody can add comments or replies until they are resumed.';
  if (markup.scopes && !markup.scopes.includes('create-thread')) return 'Your role in this workspace can read comments but not add them.';
  return undefined;
}

/** The box of the element a webpage thread is pinned on (its first element's path), or undefined when the layout does not have it. */
export function elementBoxOf(thread: Pick<Thread, 'elements'>, layout: PageLayout): PageBox | undefined {
  const path = thread.elements?.[0]?.path;
  if (!path) return undefined;
  return layout.located[path] ?? layout.elements.find((element) => element.path === path) ?? undefined;
}

/**
 * Where a webpage thread's pin goes on the screenshot, in percentages of it: its element's box plus
 * the element's offsets (percentages of that box). Undefined when the element is not on this
 * screenshot (never a guess).
 */
export function pagePinOf(thread: Pick<Thread, 'elements'>, layout: PageLayout): { x: number; y: number } | undefined {
  const box = elementBoxOf(thread, layout);
  const element = thread.elements?.[0];
  if (!box || !element || layout.width <= 0 || layout.height <= 0) return undefined;
  const x = box.x + (box.width * clamp(element.offsetXPercentage ?? 50, 0, 100)) / 100;
  const y = box.y + (box.height * clamp(element.offsetYPercentage ?? 50, 0, 100)) / 100;
  if (y > layout.height || x > layout.width) return undefined;
  return { x: (x / layout.width) * 100, y: (y / layout.height) * 100 };
}

/** Selectors of threads the layout has not looked for yet (made after its render): when any, the layout is worth reading again. */
export function unlocatedPaths(threads: readonly Pick<Thread, 'elements'>[], layout: PageLayout): string[] {
  const known = new Set(layout.elements.map((element) => element.path));
  const paths = threads.flatMap((thread) => (thread.elements?.[0]?.path ? [thread.elements[0].path] : []));
  return [...new Set(paths.filter((path) => !known.has(path) && !(path in layout.located)))].sort();
}

/**
 * The element under a point of the screenshot (CSS pixels of the page) and the point as
 * percentages of its box: the deepest element whose box holds the point (the longest path; among
 * equals the later one, painted above). Undefined outside every element.
 */
export function elementAt(
  layout: PageLayout,
  point: { x: number; y: number },
): { path: string; offsetXPercentage: number; offsetYPercentage: number } | undefined {
  let best: (PageBox & { path: string }) | undefined;
  let bestDepth = -1;
  for (const element of layout.elements) {
    if (point.x < element.x || point.y < element.y || point.x > element.x + element.width || point.y > element.y + element.height) continue;
    const depth = element.path.split(' > ').length;
    if (depth >= bestDepth) {
      best = element;
      bestDepth = depth;
    }
  }
  if (!best) return undefined;
  const [offsetXPercentage, offsetYPercentage] = percentOf(point, { left: best.x, top: best.y, width: best.width, height: best.height });
  return { path: best.path, offsetXPercentage, offsetYPercentage };
}

/** Why no comment can be placed on a webpage markup's screenshots yet, or undefined when one is ready. */
export function pageRefusalOf(markup: Pick<Markup, 'type' | 'pageScreenshots'>): string | undefined {
  if (markup.type !== 'webpage') return undefined;
  const shots = markup.pageScreenshots ?? [];
  if (shots.some((shot) => shot.state === 'ready')) return undefined;
  if (shots.some((shot) => shot.state === 'pending')) return 'Comments can be added once the page is rendered.';
  return (
    'Comments on a webpage are placed on its screenshot, and this page has none: ' +
    (shots.find((shot) => shot.error)?.error ?? 'it could not be rendered.')
  );
}
