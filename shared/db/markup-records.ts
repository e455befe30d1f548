import { getConfig } from '../config.js';
import { queryPrefix } from './core/paging.js';
import { batchDelete, type TransactItem } from './core/transact.js';

/**
 * Records that hang off a markup under `MARKUP#<id>`: users tagged in its threads and per-view-mode
 * thread counts. They go when the markup goes (`deleteItemRecords`).
 */
export const markupPartition = (markupId: string) => `MARKUP#${markupId}`;
/** A user mentioned in one of the markup's threads; written by the threads issue. */
export const markupTagKey = (markupId: string, userId: string) => ({ PK: markupPartition(markupId), SK: `TAGGED#${userId}` });
/** The number of threads of a markup placed in one view mode; moved with ADD by the threads issue. */
export const viewModeCountKey = (markupId: string, viewModeId: string) => ({ PK: markupPartition(markupId), SK: `VIEWMODE#${viewModeId}` });

export function markupTagItem(markupId: string, userId: string, at = Date.now()): Record<string, unknown> {
  return { ...markupTagKey(markupId, userId), entity: 'MarkupTag', markupId, userId, taggedAt: at };
}

/** Moves one view mode's thread count by `delta`, inside the transaction that creates or removes a thread. */
export function viewModeCountUpdate(markupId: string, viewModeId: string, delta: number): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: viewModeCountKey(markupId, viewModeId),
      UpdateExpression: 'ADD threadCount :delta SET entity = :entity, markupId = :markup, viewModeId = :mode',
      ExpressionAttributeValues: { ':delta': delta, ':entity': 'ViewModeThreadCount', ':markup': markupId, ':mode': viewModeId },
    },
  };
}

export function listMarkupTags(markupId: string): Promise<Record<string, unknown>[]> {
  return queryPrefix(markupPartition(markupId), 'TAGGED#');
}

export function listViewModeCounts(markupId: string): Promise<Record<string, unknown>[]> {
  return queryPrefix(markupPartition(markupId), 'VIEWMODE#');
}

/** Removes everything stored under `MARKUP#<id>` of one deleted markup. */
export async function deleteMarkupSideRecords(markupId: string): Promise<void> {
  const items = await queryPrefix(markupPartition(markupId));
  await batchDelete(items.map((item) => ({ PK: item.PK, SK: item.SK })));
}
