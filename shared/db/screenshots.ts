import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { pageCopyPut } from './thread-index.js';
import { getThreadRecord, threadKey, threadReplace, withCopyIfItFits, type ScreenshotRecord } from './threads.js';
import { fromFreshReads, STALE, transactUnlessConditionFails, type TransactItem } from './core/transact.js';

/**
 * A thread's screenshot is a field of the thread record (`screenshot`), so attaching, replacing and
 * deleting it move with the thread's own revision. The conversion worker settles it (thumbnail made
 * or processing failed) with one transaction that moves the revision and writes the thread's page
 * copy (`thread-index.ts`), so a writer that read the thread before cannot put the old
 * `isProcessing: true` back.
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
 * this outcome belongs to nobody. The thread's page copy (`thread-index.ts`) is written with it, so
 * the write holds only at the revision read: another change of the thread in between (a reply)
 * makes it read again. `also` (the outcome's outbox event) commits in the same transaction.
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
  return fromFreshReads(`Thread ${threadId}`, async () => {
    const thread = await getThreadRecord(markupId, threadId);
    if (thread?.screenshot?.id !== screenshotId || !thread.screenshot.isProcessing) return false;
    // As change-thread writes a thread: the record at the next revision, only while it is still at
    // the one read (which holds this screenshot, processing), and its page copy the same record.
    const written = withCopyIfItFits({
      ...thread,
      revision: thread.revision + 1,
      screenshot: { ...thread.screenshot, isProcessing: false, [field]: value, modifiedAt: at },
    });
    const failed = await transactUnlessConditionFails([threadReplace(thread, written), pageCopyPut(written), ...(options.also ?? [])]);
    // The thread changed since it was read: read it again (and find the screenshot settled, replaced, or still to settle).
    if (failed === 0) return STALE;
    return failed === undefined;
  });
}
