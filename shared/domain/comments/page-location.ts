import type { MarkupRecord } from '../../db/items.js';
import type { ThreadRecord } from '../../db/threads.js';
import { bestEffort } from '../../db/core/transact.js';
import { enqueueThumbnail } from '../../events/jobs.js';

/**
 * A webpage thread on a view mode whose full-page screenshot is ready: the thumbnail worker adds
 * its element's box to the layout if the selector is new to it (locate-page-elements; a selector
 * the board took from the layout costs one object read there). A thread made while the screenshot
 * renders is located by that render, which reads the threads again after it settles. A pin moved
 * to other elements (move-pin) is located the same way. Best effort:
 * the thread is committed, and a lost job leaves the pin listed as not on the screenshot.
 */
export async function locateOnPageScreenshot(markup: MarkupRecord, thread: ThreadRecord): Promise<void> {
  if (markup.type !== 'webpage' || !thread.viewModeId || markup.pageScreenshots?.[thread.viewModeId]?.state !== 'ready') return;
  const viewModeId = thread.viewModeId;
  await bestEffort('page element location', () => enqueueThumbnail({ type: 'locate-page-elements', markupId: markup.id, viewModeId }));
}
