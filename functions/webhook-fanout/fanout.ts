import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { eventsOfItem, type EventRecord } from '../../shared/db/events.js';
import { failIfArmed } from '../../shared/db/faults.js';
import { allWorkspaceWebhookRegistrations, type WebhookRegistrationRecord } from '../../shared/db/webhooks.js';
import { receivesEvent } from '../../shared/domain/webhook-registrations.js';
import { enqueueWebhookDeliveries, type WebhookDeliveryJob } from '../../shared/events/jobs.js';
import { matchesStreamFilter } from '../../shared/events/outbox-stream.js';
import { logger } from '../../shared/logger.js';

/** The first-attempt jobs of one outbox item: one per (event, receiving registration). */
export function deliveryJobs(events: readonly EventRecord[], registrations: readonly WebhookRegistrationRecord[]): WebhookDeliveryJob[] {
  return events.flatMap((event) =>
    registrations.filter((registration) => receivesEvent(registration, event)).map((registration) => ({ type: 'deliver-webhook' as const, registrationId: registration.id, event, attempt: 1 })),
  );
}

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
  const registrationsByWorkspace = new Map<string, Promise<WebhookRegistrationRecord[]>>();
  const registrationsOf = (workspaceId: string) => {
    let found = registrationsByWorkspace.get(workspaceId);
    if (!found) registrationsByWorkspace.set(workspaceId, (found = allWorkspaceWebhookRegistrations(workspaceId)));
    return found;
  };
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

async function fanOutRecord(record: DynamoDBRecord, registrationsOf: (workspaceId: string) => Promise<WebhookRegistrationRecord[]>): Promise<void> {
  if (!matchesStreamFilter(record as Parameters<typeof matchesStreamFilter>[0])) return;
  const image = record.dynamodb?.NewImage;
  if (!image) return;
  const item = unmarshall(image as Record<string, AttributeValue>);
  const events = eventsOfItem(item);
  const workspaceId = events[0]?.workspaceId;
  if (!workspaceId) return;
  const jobs = deliveryJobs(events, await registrationsOf(workspaceId));
  // One SendMessageBatch at a time, so a local test can fail the record after part of its jobs are queued.
  for (let i = 0; i < jobs.length; i += 10) {
    if (i > 0) await failIfArmed('fanout-between-batches', workspaceId);
    await enqueueWebhookDeliveries(jobs.slice(i, i + 10));
  }
}
