import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as v from 'valibot';
import { getItem } from '../../shared/db/items.js';
import { logger } from '../../shared/logger.js';
import { INTERNAL_FAILURE_MESSAGE, markFailed } from './markup-outcome.js';
import { OutputObjects } from './objects.js';

const DeadConversion = v.object({ type: v.literal('convert-markup'), markupId: v.pipe(v.string(), v.uuid()) });

/**
 * The consumer of the conversion queue's dead-letter queue. A message lands there when its job
 * failed on every delivery, including when the worker was killed (timeout, out of memory) and so
 * could not record anything itself: a `convert-markup` job leaves its markup in the final `failed`
 * state with INTERNAL_FAILURE_MESSAGE, and whatever its runs stored is removed. A markup no longer
 * pending (converted, failed, deleted) is left as it is. Every other message is logged whole and
 * acknowledged: nothing waits on those, and retrying a dead job here would only loop.
 */
export async function handleDeadLetters(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  if (context) logger.addContext(context);
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const job = v.safeParse(DeadConversion, parseBody(record.body));
    if (!job.success) {
      logger.error('dead job dropped', { messageId: record.messageId, body: record.body });
      continue;
    }
    try {
      await failDeadConversion(job.output.markupId);
    } catch (error) {
      logger.error('dead conversion not recorded', { messageId: record.messageId, markupId: job.output.markupId, error });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}

async function failDeadConversion(markupId: string): Promise<void> {
  const markup = await getItem(markupId, true);
  if (markup?.kind !== 'markup' || markup.conversionStatus !== 'pending') return;
  logger.error('conversion job dead-lettered', { markupId, type: markup.type });
  await markFailed(markup, INTERNAL_FAILURE_MESSAGE, await OutputObjects.ofMarkup(markupId));
}

function parseBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
