import { getConfig } from '../config.js';
import type { PageLayout } from '../render/page-screenshot.js';
import { markupObjectPrefix, readObjectStart } from '../storage/objects.js';
import { itemKey, type PageScreenshotRecord } from './items.js';
import { updateIfConditionHolds } from './core/transact.js';

/**
 * Where a webpage markup's full-page screenshot of one view mode and its layout are stored: under
 * the markup's prefix, which its deletion empties. A redelivered render writes the same keys.
 */
export const pageScreenshotObjectKey = (markupId: string, viewModeId: string) => `${markupObjectPrefix(markupId)}pages/${viewModeId}.png`;
export const pageLayoutObjectKey = (markupId: string, viewModeId: string) =>
  `${markupObjectPrefix(markupId)}pages/${viewModeId}.layout.json`;

/** Every view mode pending: what a new webpage markup starts with. */
export const pendingPageScreenshots = (viewModeIds: readonly string[]): Record<string, PageScreenshotRecord> =>
  Object.fromEntries(viewModeIds.map((id) => [id, { state: 'pending' }]));

/**
 * Records the outcome of one view mode's render, only while that mode is still pending: a
 * duplicate delivery that comes second, or a last attempt's `unavailable` after a success, changes
 * nothing. Answers false when nothing was written (the markup is gone, or the mode was settled).
 * The objects are stored before this write, so a `ready` record always names whole objects.
 */
export function settlePageScreenshot(
  markupId: string,
  viewModeId: string,
  outcome: PageScreenshotRecord & { state: 'ready' | 'unavailable' },
): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markupId),
    // A new version: the markup's ETag changes with what its read shows (`pageScreenshots`).
    UpdateExpression: 'SET pageScreenshots.#mode = :outcome ADD version :one',
    ConditionExpression: 'entity = :markup AND pageScreenshots.#mode.#state = :pending',
    ExpressionAttributeNames: { '#mode': viewModeId, '#state': 'state' },
    ExpressionAttributeValues: { ':outcome': outcome, ':markup': 'Markup', ':pending': 'pending', ':one': 1 },
  });
}

/**
 * Settles every still-pending view mode of `pending` as unavailable with `error`, in one write (the
 * page could not be reached for its thumbnail, so no view mode can be rendered either).
 */
export async function settlePendingPageScreenshots(markupId: string, pending: readonly string[], error: string): Promise<boolean> {
  if (pending.length === 0) return true;
  const names = Object.fromEntries(pending.map((id, index) => [`#m${index}`, id]));
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markupId),
    UpdateExpression: `SET ${pending.map((_, index) => `pageScreenshots.#m${index} = :outcome`).join(', ')} ADD version :one`,
    ConditionExpression: `entity = :markup AND ${pending.map((_, index) => `pageScreenshots.#m${index}.#state = :pending`).join(' AND ')}`,
    ExpressionAttributeNames: { ...names, '#state': 'state' },
    ExpressionAttributeValues: { ':outcome': { state: 'unavailable', error }, ':markup': 'Markup', ':pending': 'pending', ':one': 1 },
  });
}

/** Bigger than any layout the renderer writes (MAX_LAYOUT_ELEMENTS boxes and MAX_LOCATED_PATHS selectors). */
const MAX_LAYOUT_BYTES = 8 * 1024 * 1024;

/** A view mode's stored layout, or undefined when its object is gone (the markup was deleted). */
export async function readPageLayout(key: string): Promise<PageLayout | undefined> {
  const bytes = await readObjectStart(key, MAX_LAYOUT_BYTES);
  return bytes ? (JSON.parse(bytes.toString('utf8')) as PageLayout) : undefined;
}
