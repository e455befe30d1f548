import { ConversionError } from '../../convert/errors.js';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { recordConversionProgress, type ConversionProgress } from '../../db/conversion-progress.js';
import { eventItem } from '../../db/events.js';
import { getItem, itemUpdate, type ItemRecord, type MarkupRecord } from '../../db/items.js';
import { markWorkStarted } from '../../db/pending-work.js';
import { storageDelta, type StorageCategory } from '../../db/storage.js';
import { transactUnlessConditionFails, type TransactItem } from '../../db/core/transact.js';
import { chargeAdjustment } from '../../db/usage.js';
import { logger } from '../../logger.js';
import { recordMetrics } from '../../metrics.js';
import { deleteObjectsOfDeletedMarkup } from './objects.js';
import { applyPolicyAfterConversion } from './originals.js';

export type { ConversionProgress };
export type { MarkupDocumentRecord, MarkupImageRecord, MarkupRecord, MarkupVideoRecord } from '../../db/items.js';

/**
 * A conversion's outcome, the domain's side of the conversion worker (functions/conversion): which
 * state a markup moves to for each result of a run, and the one conditional write that puts it
 * there. The decisions are pure functions (`runVerdict`, `readyOutcome`, `failedOutcome`,
 * `reopenedOutcome`, `stillPending`, `afterLostRace`, unit-tested in
 * test/unit/conversion-outcome.test.ts); the rest reads and writes through shared/db.
 */

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

/** What a run stored, which an outcome may have to remove again (functions/conversion/objects.ts `OutputObjects`). */
export interface ConversionOutputs {
  deleteAll(): Promise<void>;
}

/** The markup was deleted while it was converted: the run stops before its next page. */
export class MarkupDeleted extends Error {
  override name = 'MarkupDeleted';
}

// ---- The decisions (pure) ----

/** The markup made ready with what the run converted: its outputs, bytes counted apart, and its thumbnail or why there is none. */
export function readyOutcome(current: MarkupRecord, converted: Converted, now: number): MarkupRecord {
  return {
    ...current,
    ...converted.changes,
    isReady: true,
    conversionStatus: 'ready',
    conversionError: undefined,
    modifiedAt: now,
    ...('key' in converted.thumbnail
      ? { thumbnailState: 'ready' as const, thumbnailKey: converted.thumbnail.key, thumbnailError: undefined }
      : { thumbnailState: 'unavailable' as const, thumbnailError: converted.thumbnail.error }),
  };
}

/**
 * The final failed state: `isReady` true (the worker is done), no images/document/video, the reason
 * in `conversionError` and as why there is no thumbnail.
 */
export function failedOutcome(current: MarkupRecord, reason: string, now: number): MarkupRecord {
  return {
    ...current,
    ...(current.type === 'image' ? { images: [] } : {}),
    document: undefined,
    video: undefined,
    isReady: true,
    conversionStatus: 'failed',
    conversionError: reason,
    modifiedAt: now,
    thumbnailState: 'unavailable',
    thumbnailKey: undefined,
    thumbnailError: reason,
  };
}

/** A dead conversion made pending again, as before its first run. */
export function reopenedOutcome(markup: MarkupRecord, now: number): MarkupRecord {
  return { ...markup, isReady: false, conversionStatus: 'pending', conversionError: undefined, thumbnailError: undefined, modifiedAt: now };
}

/**
 * A conversion that died (the worker failed on every delivery, or was killed and the dead-letter
 * consumer recorded it: INTERNAL_FAILURE_MESSAGE) of a markup whose original is still stored: its
 * job, redriven from the hold queue (`admin queue redrive --queue conversion`), may convert it again.
 * A file that could not be converted (any other reason) stays failed: it would fail the same way.
 */
export function diedWithOriginal(markup: MarkupRecord): boolean {
  return (
    markup.conversionStatus === 'failed' &&
    markup.conversionError === INTERNAL_FAILURE_MESSAGE &&
    markup.hasRetainedOriginal &&
    markup.source !== undefined
  );
}

/**
 * The markup as read again after a settling write failed: still to settle (pending, perhaps in another workspace), or undefined (deleted,
 * or settled by another run).
 */
export function stillPending(fresh: ItemRecord | undefined): MarkupRecord | undefined {
  return fresh?.kind === 'markup' && fresh.conversionStatus === 'pending' ? fresh : undefined;
}

/**
 * What a run that lost the race (the markup was no longer pending) does with what it stored: keep
 * it when another run made the markup ready (the same keys, the same bytes); empty the markup's
 * whole prefix when it was deleted (the deletion's own job may have listed it before this run's
 * last write); otherwise (another run recorded a failure) remove this run's outputs.
 */
export function afterLostRace(status: MarkupRecord['conversionStatus'] | 'deleted'): 'keep' | 'delete-prefix' | 'delete-outputs' {
  if (status === 'ready') return 'keep';
  if (status === 'deleted') return 'delete-prefix';
  return 'delete-outputs';
}

/** What becomes of a run that threw. */
export type RunVerdict =
  /** Deleted during the run: what was stored goes, the message is acknowledged. */
  | { kind: 'deleted' }
  /** The file cannot be converted (a ConversionError, a breach of CONVERSION_LIMITS among them): failed for good, acknowledged. */
  | { kind: 'failed'; reason: string }
  /** The worker failed on the last delivery before the dead-letter queue: the failure is recorded, and the error thrown. */
  | { kind: 'failed-last-delivery'; reason: typeof INTERNAL_FAILURE_MESSAGE }
  /** Any other failure: thrown, so the message is delivered again. */
  | { kind: 'retry' };

export function runVerdict(error: unknown, lastDelivery: boolean): RunVerdict {
  if (error instanceof MarkupDeleted) return { kind: 'deleted' };
  if (error instanceof ConversionError) return { kind: 'failed', reason: error.message };
  return lastDelivery ? { kind: 'failed-last-delivery', reason: INTERNAL_FAILURE_MESSAGE } : { kind: 'retry' };
}

// ---- The writes ----

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
 * this run committed it. A markup moved to another workspace meanwhile is read again (at once: a
 * move is no contention to wait out); one that is no longer pending (deleted, or settled by another
 * run) answers false.
 */
async function settle(
  markup: MarkupRecord,
  outcomeOf: (current: MarkupRecord) => MarkupRecord,
  also: TransactItem[] = [],
): Promise<boolean> {
  let current: MarkupRecord = markup;
  return withBackoff(
    async () => {
      const update = itemUpdate(current, outcomeOf(current), { when: stillPendingIn(current.workspaceId) });
      if (!update) return false;
      const event = eventItem({ type: 'markup_ready', workspaceId: current.workspaceId, markupId: current.id });
      if ((await transactUnlessConditionFails([{ Update: update }, event, ...also])) === undefined) return true;
      const fresh = stillPending(await getItem(markup.id, true));
      if (!fresh) return false;
      current = fresh;
      return AGAIN;
    },
    {
      attempts: MAX_SETTLE_ATTEMPTS,
      baseMs: 0,
      exhausted: () => new Error(`Markup ${markup.id} kept moving between workspaces while its conversion finished.`),
    },
  );
}

/**
 * Makes the markup ready and counts its bytes in one transaction that holds only while the markup
 * is still pending: of concurrent or repeated runs exactly one gets through, and its transaction
 * alone records `markup_ready`. If the markup was deleted meanwhile, the outputs are removed again.
 */
export async function markReady(markup: MarkupRecord, converted: Converted, outputs: ConversionOutputs): Promise<void> {
  const readyOf = (current: MarkupRecord) => readyOutcome(current, converted, Date.now());
  if (!(await settle(markup, readyOf, [{ Update: storageDelta(markup.organizationId, converted.category, converted.bytes) }]))) {
    await cleanUpAfterLostRace(markup, outputs);
    return;
  }
  recordConversion(markup, 'ConversionSucceeded');
  await applyPolicyAfterConversion(markup.id);
}

/**
 * The final failed state (`failedOutcome`). Whatever this run stored is removed; `markup_ready` is
 * recorded because `isReady` became true (States and transitions), so listeners stop waiting. The
 * markup's charge goes back to the month it was taken from (DESIGN.md: a failed conversion does not
 * count), in the transaction that settles it, so exactly once however often the job is delivered.
 */
export async function markFailed(markup: MarkupRecord, reason: string, outputs: ConversionOutputs): Promise<void> {
  const failedOf = (current: MarkupRecord) => failedOutcome(current, reason, Date.now());
  if (!(await settle(markup, failedOf, chargeReturnOf(markup)))) {
    await cleanUpAfterLostRace(markup, outputs);
    return;
  }
  recordConversion(markup, 'ConversionFailed');
  await outputs.deleteAll().catch((error: unknown) => logger.warn('conversion outputs not removed', { markupId: markup.id, error }));
  await applyPolicyAfterConversion(markup.id);
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
  const pending = reopenedOutcome(markup, Date.now());
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

/** The markup was no longer pending: what this run stored stays or goes (`afterLostRace`). */
async function cleanUpAfterLostRace(markup: MarkupRecord, outputs: ConversionOutputs): Promise<void> {
  const current = await getItem(markup.id, true);
  const status = current ? (current.kind === 'markup' ? current.conversionStatus : undefined) : 'deleted';
  logger.info('markup no longer pending', { markupId: markup.id, conversionStatus: status ?? 'deleted' });
  const action = afterLostRace(status);
  if (action === 'keep') return;
  // Thrown, not logged: the job is retried and its next delivery finds the markup gone.
  if (action === 'delete-prefix') {
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
const chargeReturnOf = (markup: MarkupRecord): TransactItem[] =>
  markup.charge ? chargeAdjustment(markup.charge, markup.organizationId, -1) : [];

const chargeTakenAgainOf = (markup: MarkupRecord): TransactItem[] =>
  markup.charge ? chargeAdjustment(markup.charge, markup.organizationId, 1) : [];

// ---- The job's reads and writes around a run ----

/**
 * The markup a `convert-markup` job is to convert, made the job's own (the pending-work sweep no
 * longer queues it), or undefined when there is nothing to convert: deleted (what an earlier run
 * stored goes too), not a markup, or already finished (only the idempotent policy step may still be
 * owed). A dead conversion whose original is kept is made pending again first (`reopenDeadConversion`).
 */
export async function startConversion(markupId: string): Promise<MarkupRecord | undefined> {
  const found = await getItem(markupId, true);
  if (!found) {
    // Deleted, perhaps after an earlier run of this job stored outputs and died: they go too.
    await deleteObjectsOfDeletedMarkup(markupId);
    return undefined;
  }
  if (found.kind !== 'markup') return undefined;
  const markup = diedWithOriginal(found) ? await reopenDeadConversion(found) : found;
  if (!markup) return undefined;
  if (markup.conversionStatus === 'failed' && markup.conversionError === INTERNAL_FAILURE_MESSAGE && !markup.hasRetainedOriginal) {
    logger.warn('dead conversion not converted again: its original was archived', { markupId: markup.id });
  }
  if (markup.conversionStatus !== 'pending') {
    // A retry of a finished conversion: only the (idempotent) policy step may still be owed.
    if (markup.conversionStatus) await applyPolicyAfterConversion(markup.id);
    return undefined;
  }
  // From here the job's deliveries own the work: the pending-work sweep no longer queues it.
  await markWorkStarted(markup.id, Date.now());
  return markup;
}

/**
 * Before each page: a markup deleted meanwhile stops the run (one consistent read a page, against
 * rendering and storing the rest of a 500-page PDF for nothing). What was stored goes then.
 */
export async function requireMarkupStill(markupId: string): Promise<void> {
  if (!(await getItem(markupId, true))) throw new MarkupDeleted(`markup ${markupId} was deleted during its conversion`);
}

/** Writes how far a run has come, for the app's progress bar (shared/db/conversion-progress.ts). */
export async function recordProgress(markupId: string, progress: ConversionProgress): Promise<void> {
  await recordConversionProgress(markupId, progress);
}

/**
 * The end of a run that threw (`runVerdict`): a markup deleted meanwhile loses what was stored; a
 * file that cannot be converted ends failed; the last delivery records an internal failure (if it
 * can) and throws; anything else throws, so the message is delivered again.
 */
export async function finishFailedRun(
  markup: MarkupRecord,
  error: unknown,
  run: { lastDelivery: boolean; outputs: ConversionOutputs; startedAt: number },
): Promise<void> {
  const verdict = runVerdict(error, run.lastDelivery);
  if (verdict.kind === 'deleted') {
    logger.info('markup deleted during its conversion', { markupId: markup.id, ms: Date.now() - run.startedAt });
    await deleteObjectsOfDeletedMarkup(markup.id);
    return;
  }
  if (verdict.kind === 'failed') {
    logger.info('markup conversion failed', { markupId: markup.id, type: markup.type, reason: verdict.reason });
    await markFailed(markup, verdict.reason, run.outputs);
    return;
  }
  if (verdict.kind === 'failed-last-delivery') {
    await markFailed(markup, verdict.reason, run.outputs).catch((markError: unknown) =>
      logger.error('conversion failure not recorded', { markupId: markup.id, error: markError }),
    );
  }
  throw error;
}
