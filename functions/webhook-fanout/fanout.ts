import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { fanOutOutboxItem, registrationsReader, type RegistrationsReader } from '../../shared/domain/webhooks/deliveries.js';
import { matchesStreamFilter } from '../../shared/events/outbox-stream.js';
import { logger } from '../../shared/logger.js';

/**
 * Fans a batch of the table's stream out into delivery jobs, record by record in stream order.
 * Records the outbox filter does not match are skipped (deployed, Lambda's FilterCriteria already
 * dropped them). At the first record that fails it stops and answers that record's SequenceNumber,
 * so the event source resumes there: nothing after a failure is lost and nothing before it is
 * enqueued again (a retry may repeat the failed record's jobs: the same
 * `webhook-id`, which receivers deduplicate). Registrations are read once per workspace per call.
 */
export async function fanOut(event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  if (context) logger.addContext(context);
  const registrationsOf = registrationsReader();
  for (const record of event.Records) {
    try {
      await fanOutRecord(record, registrationsOf);
    } catch (error) {
      logger.error('webhook fan-out failed; the batch resumes at this record', { sequenceNumber: record.dynamodb?.SequenceNumber, error });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}

async function fanOutRecord(record: DynamoDBRecord, registrationsOf: RegistrationsReader): Promise<void> {
  if (!matchesStreamFilter(record as Parameters<typeof matchesStreamFilter>[0])) return;
  const image = record.dynamodb?.NewImage;
  if (!image) return;
  await fanOutOutboxItem(unmarshall(image as Record<string, AttributeValue>), registrationsOf);
}
