import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as v from 'valibot';
import { markupOfJob } from '../../shared/domain/markups/objects.js';
import { holdConversionDeadLetter } from '../../shared/events/jobs.js';
import { logger } from '../../shared/logger.js';
import { INTERNAL_FAILURE_MESSAGE, markFailed } from './markup-outcome.js';
import { OutputObjects } from './objects.js';

const DeadConversion = v.object({ type: v.literal('convert-markup'), markupId: v.pipe(v.string(), v.uuid()) });

/**
 * The consumer of the conversion queue's dead-letter queue. A message lands there when its job
 * failed on every delivery, including when the worker was killed (timeout, out of memory) and so
 * could not record anything itself: a `convert-markup` job leaves its markup in the `failed` state
 * with INTERNAL_FAILURE_MESSAGE, and whatever its runs stored is removed. A deleted markup's prefix
 * is emptied; a markup no longer pending (converted, failed) is left as it is; other jobs are
 * logged whole.
 *
 * Then every dead letter is handed on to the hold queue before it is acknowledged (sent before it is
 * deleted here, so none is lost between the two), where it waits for an operator's
 * `admin queue redrive --queue conversion` once the cause is fixed; retrying it here would only loop.
 * A redriven `convert-markup` job reopens its markup (convert-markup.ts), so the redrive converts it.
 */
export async function handleDeadLetters(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  if (context) logger.addContext(context);
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    const job = v.safeParse(DeadConversion, parseBody(record.body));
    try {
      if (job.success) await failDeadConversion(job.output.markupId);
      else logger.error('dead job kept for a redrive', { messageId: record.messageId, body: record.body });
      await holdConversionDeadLetter(record.body);
    } catch (error) {
      logger.error('dead letter not handled', {
        messageId: record.messageId,
        ...(job.success ? { markupId: job.output.markupId } : {}),
        error,
      });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}

async function failDeadConversion(markupId: string): Promise<void> {
  // Deleted while its job was dying: what the job's runs stored goes with the rest of the prefix (`markupOfJob`).
  const markup = await markupOfJob(markupId);
  if (markup?.conversionStatus !== 'pending') return;
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
