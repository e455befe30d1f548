import type { Context, ScheduledEvent } from 'aws-lambda';
import { getConfig } from '../../shared/config.js';
import { sweepPendingWork } from '../../shared/domain/pending-work.js';
import { logger } from '../../shared/logger.js';

getConfig();

/**
 * Queues again the conversion or thumbnail job of markups whose job no run took within minutes of
 * its queueing (lost between the creating commit and its enqueue): shared/domain/pending-work.ts.
 * Run on a schedule (an EventBridge rule deployed, a timer in the local stack); a failure throws,
 * so the rule's retries and then its dead-letter queue see it. The local stack's run as it starts
 * (`atStart`) takes every markup whose job no run took, however recent: the process that would have
 * queued it is gone (a job queued twice is harmless).
 */
export async function handler(event: Partial<ScheduledEvent> & { atStart?: boolean }, context?: Context): Promise<{ queued: number }> {
  if (context) logger.addContext(context);
  return { queued: await sweepPendingWork(Date.now(), event.atStart === true ? { graceMs: 0 } : {}) };
}
