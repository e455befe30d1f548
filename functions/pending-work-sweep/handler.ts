import type { Context, ScheduledEvent } from 'aws-lambda';
import { getConfig } from '../../shared/config.js';
import { MOVE_STALL_MS, requeuePendingMoves } from '../../shared/domain/items/pending-moves.js';
import { sweepPendingWork } from '../../shared/domain/markups/pending-work.js';
import { logger } from '../../shared/logger.js';

getConfig();

/**
 * Queues again the conversion or thumbnail job of markups whose job no run took within minutes of
 * its queueing (lost between the creating commit and its enqueue): shared/domain/markups/pending-work.ts;
 * and the job of every folder move into another workspace that no batch advanced for
 * MOVE_STALL_MS (`requeuePendingMoves`), so a lost move job is finished without anyone reading the tree.
 * Run on a schedule (an EventBridge rule deployed, a timer in the local stack); a failure throws,
 * so the rule's retries and then its dead-letter queue see it. The local stack's run as it starts
 * (`atStart`) takes every markup whose job no run took, however recent: the process that would have
 * queued it is gone (a job queued twice is harmless).
 */
export async function handler(
  event: Partial<ScheduledEvent> & { atStart?: boolean },
  context?: Context,
): Promise<{ queued: number; moves: number }> {
  if (context) logger.addContext(context);
  const now = Date.now();
  const atStart = event.atStart === true;
  const [queued, moves] = await Promise.all([
    sweepPendingWork(now, atStart ? { graceMs: 0 } : {}),
    requeuePendingMoves(atStart ? {} : { stalledBefore: now - MOVE_STALL_MS }),
  ]);
  if (moves > 0) logger.info('stalled moves queued again', { moves });
  return { queued, moves };
}
