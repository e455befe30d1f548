import { listViewModeCounts } from '../../db/markup-records.js';
import type { ViewModeView } from '../../schemas/markups.js';

export type ViewModeCategory = ViewModeView['category'];

/**
 * One breakpoint: the viewport (CSS pixels) a webpage markup is shown at in that mode (a view mode as answered, without its thread count).
 */
export type ViewMode = Omit<ViewModeView, 'threadCount'>;

/** The device breakpoints every markup offers; the ids are fixed so clients may keep them. */
export const VIEW_MODES: readonly ViewMode[] = [
  { id: 'a673a36a-f762-44d0-b3a9-09825d75b599', category: 'desktop', name: 'Desktop', width: 1440, height: 900 },
  { id: '75102da4-4917-4030-86a0-e694159b746a', category: 'tablet', name: 'Tablet', width: 768, height: 1024 },
  { id: '9240db74-f5b4-45b2-a836-91576f169b64', category: 'mobile', name: 'Mobile', width: 375, height: 812 },
];

/** GET /markups/:id/view-modes: each view mode with the number of threads placed in it (0 without a counter). */
export async function listViewModes(markupId: string): Promise<ViewModeView[]> {
  const counters = await listViewModeCounts(markupId);
  const counts = new Map(counters.map((counter) => [counter.viewModeId as string, Number(counter.threadCount ?? 0)]));
  return VIEW_MODES.map((mode) => ({ ...mode, threadCount: Math.max(0, counts.get(mode.id) ?? 0) }));
}
