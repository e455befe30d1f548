import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { threadKey, type ScreenshotRecord } from './threads.js';
import { transactUnlessConditionFails, updateIfConditionHolds, type TransactItem } from './core/transact.js';

/**
 * A thread's screenshot is a field of the thread record (`screenshot`), so attaching, replacing and
 * deleting it move with the thread's own revision. The conversion worker settles it (thumbnail made
 * or processing failed) with one conditional update that also moves the revision, so a writer that
 * read the thread before cannot put the old `isProcessing: true` back.
 */

/**
 * Thumbnails live outside `uploads/`: objects there are taken for posted uploads by the bucket
 * notification, and an upload's own folder holds its file under the client's file name, which could
 * be `thumbnail.png` too. One fixed key per screenshot, so a retried job overwrites its own.
 */
export function screenshotThumbnailKey(markupId: string, threadId: string, screenshotId: string, extension: 'png' | 'jpg'): string {
  return `markups/${markupId}/threads/${threadId}/screenshots/${screenshotId}/thumbnail.${extension}`;
}

/** The screenshot a thread holds now, or undefined when the thread or its screenshot is gone. */
export async function getThreadScreenshot(markupId: string, threadId: string): Promise<ScreenshotRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({
      TableName: getConfig().tableName,
      Key: threadKey(markupId, threadId),
      ConsistentRead: true,
      ProjectionExpression: 'screenshot',
    }),
  );
  return result.Item?.screenshot as ScreenshotRecord | undefined;
}

export type ScreenshotOutcome = { thumbnailKey: string } | { processingError: string };

/**
 * Records the end of a screenshot's processing, only while the thread still holds that screenshot
 * and it is still processing. Answers false when it was replaced, deleted or settled meanwhile: then
 * this outcome belongs to nobody. `also` (the outcome's outbox event) commits in the same transaction.
 */
export async function settleScreenshot(
  markupId: string,
  threadId: string,
  screenshotId: string,
  outcome: ScreenshotOutcome,
  options: { at?: number; also?: TransactItem[] } = {},
): Promise<boolean> {
  const [field, value] = 'thumbnailKey' in outcome ? ['thumbnailKey', outcome.thumbnailKey] : ['processingError', outcome.processingError];
  const at = options.at ?? Date.now();
  const update = {
    TableName: getConfig().tableName,
    Key: threadKey(markupId, threadId),
    UpdateExpression: 'SET screenshot.isProcessing = :false, screenshot.#field = :value, screenshot.modifiedAt = :at ADD revision :one',
    ConditionExpression: 'screenshot.id = :id AND screenshot.isProcessing = :true',
    ExpressionAttributeNames: { '#field': field },
    ExpressionAttributeValues: { ':false': false, ':true': true, ':value': value, ':at': at, ':id': screenshotId, ':one': 1 },
  };
  if (!options.also?.length) return updateIfConditionHolds(update);
  return (await transactUnlessConditionFails([{ Update: update }, ...options.also])) === undefined;
}
