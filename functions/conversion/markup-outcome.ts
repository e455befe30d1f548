import { isConditionFailure } from '../../shared/db/errors.js';
import { recordEvent } from '../../shared/db/events.js';
import { getItem, itemUpdate, type MarkupRecord } from '../../shared/db/items.js';
import { storageDelta, type StorageCategory } from '../../shared/db/storage.js';
import { transact, updateIfConditionHolds } from '../../shared/db/transact.js';
import { applyPolicyAfterConversion } from '../../shared/domain/originals.js';
import { logger } from '../../shared/logger.js';
import type { OutputObjects } from './objects.js';

/** What users see when the worker itself kept failing (after the last retry, or when its job died). */
export const INTERNAL_FAILURE_MESSAGE = 'The file could not be converted because of an internal error; upload it again to retry.';

/** What a finished conversion writes to the markup. */
export interface Converted {
  changes: Pick<MarkupRecord, 'images' | 'document' | 'video' | 'originalMimeType'>;
  category: StorageCategory;
  /** Bytes of every file the markup now records (its images, page images, or video and poster). */
  bytes: number;
  thumbnail: { key: string } | { error: string };
}

const stillPending = { expression: '#cs = :pending', names: { '#cs': 'conversionStatus' }, values: { ':pending': 'pending' } };

/**
 * Makes the markup ready and counts its bytes in one transaction that holds only while the markup
 * is still pending: of concurrent or repeated runs exactly one gets through, and it alone records
 * `markup_ready`. If the markup was deleted meanwhile, the outputs are removed again.
 */
export async function markReady(markup: MarkupRecord, converted: Converted, outputs: OutputObjects): Promise<void> {
  const ready: MarkupRecord = {
    ...markup,
    ...converted.changes,
    isReady: true,
    conversionStatus: 'ready',
    conversionError: undefined,
    modifiedAt: Date.now(),
    ...('key' in converted.thumbnail
      ? { thumbnailState: 'ready' as const, thumbnailKey: converted.thumbnail.key, thumbnailError: undefined }
      : { thumbnailState: 'unavailable' as const, thumbnailError: converted.thumbnail.error }),
  };
  const update = itemUpdate(markup, ready, { when: stillPending });
  if (!update) return;
  try {
    await transact([{ Update: update }, { Update: storageDelta(markup.organizationId, converted.category, converted.bytes) }]);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    await afterLostRace(markup, outputs);
    return;
  }
  await finish(markup);
}

/**
 * The final failed state: `isReady` true (the worker is done), no images/document/video, the reason
 * in `conversionError`. Whatever this run stored is removed; `markup_ready` is recorded because
 * `isReady` became true (States and transitions), so listeners stop waiting.
 */
export async function markFailed(markup: MarkupRecord, reason: string, outputs: OutputObjects): Promise<void> {
  const failed: MarkupRecord = {
    ...markup,
    ...(markup.type === 'image' ? { images: [] } : {}),
    document: undefined,
    video: undefined,
    isReady: true,
    conversionStatus: 'failed',
    conversionError: reason,
    modifiedAt: Date.now(),
    thumbnailState: 'unavailable',
    thumbnailKey: undefined,
    thumbnailError: reason,
  };
  const update = itemUpdate(markup, failed, { when: stillPending });
  if (!update) return;
  if (!(await updateIfConditionHolds(update))) {
    await afterLostRace(markup, outputs);
    return;
  }
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
  await finish(markup);
}

/**
 * The markup was no longer pending. If another run made it ready, its outputs are the very objects
 * this run wrote (same keys, same bytes), so they stay. If it was deleted, or another run recorded a
 * failure, nothing refers to them and they go.
 */
async function afterLostRace(markup: MarkupRecord, outputs: OutputObjects): Promise<void> {
  const current = await getItem(markup.id, true);
  const status = current?.kind === 'markup' ? current.conversionStatus : undefined;
  logger.info('markup no longer pending', { markupId: markup.id, conversionStatus: status ?? 'deleted' });
  if (status === 'ready') return;
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
}

/** What follows a finished conversion, once: the event, then the workspace's original-file policy. */
async function finish(markup: MarkupRecord): Promise<void> {
  await recordReady(markup);
  await applyPolicyAfterConversion(markup.id);
}

/**
 * Records `markup_ready` in the workspace the markup is in now (it may have moved during the
 * conversion). Runs once, after the conditional write that only one run passes; a failure here is
 * logged, not retried, since a retry would find the markup done and skip.
 */
async function recordReady(markup: MarkupRecord): Promise<void> {
  try {
    const current = await getItem(markup.id, true);
    await recordEvent({ type: 'markup_ready', workspaceId: current?.workspaceId ?? markup.workspaceId, markupId: markup.id });
  } catch (error) {
    logger.error('markup_ready not recorded', { markupId: markup.id, error });
  }
}
