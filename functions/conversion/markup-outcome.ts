import { eventItem } from '../../shared/db/events.js';
import { getItem, itemUpdate, type MarkupRecord } from '../../shared/db/items.js';
import { storageDelta, type StorageCategory } from '../../shared/db/storage.js';
import { transactUnlessConditionFails, type TransactItem } from '../../shared/db/transact.js';
import { chargeAdjustment } from '../../shared/db/usage.js';
import { deleteObjectsOfDeletedMarkup } from '../../shared/domain/markup-objects.js';
import { applyPolicyAfterConversion } from '../../shared/domain/originals.js';
import { logger } from '../../shared/logger.js';
import { recordMetrics } from '../../shared/metrics.js';
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

/** Still pending, and still in the workspace read: the `markup_ready` event names the workspace it is in. */
const stillPendingIn = (workspaceId: string) => ({
  expression: '#cs = :pending AND #ws = :ws',
  names: { '#cs': 'conversionStatus', '#ws': 'workspaceId' },
  values: { ':pending': 'pending', ':ws': workspaceId },
});

/** Reads of a markup moved to another workspace while its outcome was being written. */
const MAX_SETTLE_ATTEMPTS = 5;

/**
 * Writes the outcome `outcomeOf` makes of the markup, with `markup_ready` and `also` in ONE
 * transaction that holds only while the markup is still pending in the workspace read: true when
 * this run committed it. A markup moved to another workspace meanwhile is read again; one that is
 * no longer pending (deleted, or settled by another run) answers false.
 */
async function settle(markup: MarkupRecord, outcomeOf: (current: MarkupRecord) => MarkupRecord, also: TransactItem[] = []): Promise<boolean> {
  let current: MarkupRecord = markup;
  for (let attempt = 0; attempt < MAX_SETTLE_ATTEMPTS; attempt += 1) {
    const update = itemUpdate(current, outcomeOf(current), { when: stillPendingIn(current.workspaceId) });
    if (!update) return false;
    const event = eventItem({ type: 'markup_ready', workspaceId: current.workspaceId, markupId: current.id });
    if ((await transactUnlessConditionFails([{ Update: update }, event, ...also])) === undefined) return true;
    const fresh = await getItem(markup.id, true);
    if (fresh?.kind !== 'markup' || fresh.conversionStatus !== 'pending') return false;
    current = fresh;
  }
  throw new Error(`Markup ${markup.id} kept moving between workspaces while its conversion finished.`);
}

/**
 * Makes the markup ready and counts its bytes in one transaction that holds only while the markup
 * is still pending: of concurrent or repeated runs exactly one gets through, and its transaction
 * alone records `markup_ready`. If the markup was deleted meanwhile, the outputs are removed again.
 */
export async function markReady(markup: MarkupRecord, converted: Converted, outputs: OutputObjects): Promise<void> {
  const readyOf = (current: MarkupRecord): MarkupRecord => ({
    ...current,
    ...converted.changes,
    isReady: true,
    conversionStatus: 'ready',
    conversionError: undefined,
    modifiedAt: Date.now(),
    ...('key' in converted.thumbnail
      ? { thumbnailState: 'ready' as const, thumbnailKey: converted.thumbnail.key, thumbnailError: undefined }
      : { thumbnailState: 'unavailable' as const, thumbnailError: converted.thumbnail.error }),
  });
  if (!(await settle(markup, readyOf, [{ Update: storageDelta(markup.organizationId, converted.category, converted.bytes) }]))) {
    await afterLostRace(markup, outputs);
    return;
  }
  recordConversion(markup, 'ConversionSucceeded');
  await applyPolicyAfterConversion(markup.id);
}

/**
 * The final failed state: `isReady` true (the worker is done), no images/document/video, the reason
 * in `conversionError`. Whatever this run stored is removed; `markup_ready` is recorded because
 * `isReady` became true (States and transitions), so listeners stop waiting. The markup's charge goes
 * back to the month it was taken from (DESIGN.md: a failed conversion does not count), in the
 * transaction that settles it, so exactly once however often the job is delivered.
 */
export async function markFailed(markup: MarkupRecord, reason: string, outputs: OutputObjects): Promise<void> {
  const failedOf = (current: MarkupRecord): MarkupRecord => ({
    ...current,
    ...(current.type === 'image' ? { images: [] } : {}),
    document: undefined,
    video: undefined,
    isReady: true,
    conversionStatus: 'failed',
    conversionError: reason,
    modifiedAt: Date.now(),
    thumbnailState: 'unavailable',
    thumbnailKey: undefined,
    thumbnailError: reason,
  });
  if (!(await settle(markup, failedOf, chargeReturnOf(markup)))) {
    await afterLostRace(markup, outputs);
    return;
  }
  recordConversion(markup, 'ConversionFailed');
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
  await applyPolicyAfterConversion(markup.id);
}

/**
 * A conversion that died (the worker failed on every delivery, or was killed and the dead-letter
 * consumer recorded it: INTERNAL_FAILURE_MESSAGE) of a markup whose original is still stored: its
 * job, redriven from the hold queue (`admin queue redrive --queue conversion`), may convert it again.
 * A file that could not be converted (any other reason) stays failed: it would fail the same way.
 */
export function diedWithOriginal(markup: MarkupRecord): boolean {
  return markup.conversionStatus === 'failed' && markup.conversionError === INTERNAL_FAILURE_MESSAGE && markup.hasRetainedOriginal && markup.source !== undefined;
}

/**
 * Makes a markup whose conversion died pending again, as it was before its first run, in one write
 * that holds only while it is still failed with INTERNAL_FAILURE_MESSAGE, in the workspace read, with
 * its original retained (an archive or a move in between wins; the markup is then read again).
 * The charge the failure gave back is taken again in the same write; nothing else moves: the failure
 * removed the outputs and counted no bytes, and the run that follows records `markup_ready` again
 * when it settles. Answers the markup as it is now, undefined when gone.
 */
export async function reopenDeadConversion(markup: MarkupRecord): Promise<MarkupRecord | undefined> {
  const pending: MarkupRecord = { ...markup, isReady: false, conversionStatus: 'pending', conversionError: undefined, thumbnailError: undefined, modifiedAt: Date.now() };
  const update = itemUpdate(markup, pending, {
    when: {
      expression: '#cs = :failed AND #ce = :internal AND #ws = :ws AND #kept = :true',
      names: { '#cs': 'conversionStatus', '#ce': 'conversionError', '#ws': 'workspaceId', '#kept': 'hasRetainedOriginal' },
      values: { ':failed': 'failed', ':internal': INTERNAL_FAILURE_MESSAGE, ':ws': markup.workspaceId, ':true': true },
    },
  });
  // The failure gave the charge back; the markup counts again while it is converted again.
  if (update && (await transactUnlessConditionFails([{ Update: update }, ...chargeTakenAgainOf(markup)])) === undefined) {
    logger.info('dead conversion reopened', { markupId: markup.id });
    return pending;
  }
  const current = await getItem(markup.id, true);
  return current?.kind === 'markup' ? current : undefined;
}

/**
 * The markup was no longer pending. If another run made it ready, its outputs are the very objects
 * this run wrote (same keys, same bytes), so they stay. If another run recorded a failure, nothing
 * refers to them and they go; if it was deleted, everything under its prefix goes.
 */
async function afterLostRace(markup: MarkupRecord, outputs: OutputObjects): Promise<void> {
  const current = await getItem(markup.id, true);
  const status = current?.kind === 'markup' ? current.conversionStatus : undefined;
  logger.info('markup no longer pending', { markupId: markup.id, conversionStatus: status ?? 'deleted' });
  if (status === 'ready') return;
  // Deleted: the whole prefix goes, as the deletion's own job may have listed it before this run's
  // last write. Thrown, not logged: the job is retried and its next delivery finds the markup gone.
  if (!current) {
    await deleteObjectsOfDeletedMarkup(markup.id);
    return;
  }
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
}

/**
 * One conversion's outcome, counted once (only the run whose transaction settled the markup): in all
 * (the failure-rate alarm divides these) and by markup type with the time since the markup was
 * created (the wait a user saw, queueing included).
 */
function recordConversion(markup: MarkupRecord, outcome: 'ConversionSucceeded' | 'ConversionFailed'): void {
  recordMetrics({ [outcome]: 1 });
  recordMetrics({ [outcome]: 1, ConversionDuration: Date.now() - markup.createdAt }, { markupType: markup.type });
}

/** The counter updates that give a markup's creation charge back (none for a markup created before charges were kept). */
const chargeReturnOf = (markup: MarkupRecord): TransactItem[] => (markup.charge ? chargeAdjustment(markup.charge, markup.organizationId, -1) : []);

const chargeTakenAgainOf = (markup: MarkupRecord): TransactItem[] => (markup.charge ? chargeAdjustment(markup.charge, markup.organizationId, 1) : []);
