import { getConfig } from '../config.js';
import { AGAIN, withBackoff } from './core/backoff.js';
import { failIfArmed } from './core/faults.js';
import { itemKey, type MarkupRecord } from './items.js';
import { markupPartition } from './markup-records.js';
import { queryPrefix, scanMatching } from './core/paging.js';
import {
  getThreadIndexState,
  indexItemId,
  indexItemKeysOf,
  indexItemsOf,
  LAYOUT_1_PREFIX,
  leafOf,
  deletePageCopyOfGoneThread,
  pageCopiesOf,
  pageCopyPartition,
  pageCopyPut,
  putPageCopyIfUnchanged,
  THREAD_INDEX_LAYOUT,
  threadIndexStateKey,
} from './thread-index.js';
import { batchDelete, batchPut, transactUnlessConditionFails } from './core/transact.js';
import { foldLegacyReadMarks } from './read-marks.js';
import { copyIsCurrent, embedMessages, getConversation } from './threads.js';

/**
 * Migration of markups written before the thread index (`thread-index.ts`, "Migration"): the
 * admin CLI's `threads backfill [--markup ID]`.
 */

export interface BackfillResult {
  markupId: string;
  threads: number;
  put: number;
  deleted: number;
  attempts: number;
  layout: number;
  /** The markup was deleted while its index was built; what the backfill put was removed again. */
  markupDeleted?: true;
}

/**
 * Builds a markup's thread index from its conversation and marks the markup indexed. Idempotent:
 * items already right are left alone, stray ones deleted (layout 1's items in the markup's
 * partition among them), missing ones put; threads without a copy of their messages get one
 * (conditioned on their revision) and legacy message marks are folded into their thread's item
 * (layout 3). Safe beside thread writes: the counts and `layout` are set only while `writes` is
 * what it was before the conversation was read; otherwise it starts again (up to 10 times).
 */
export async function backfillThreadIndex(markup: Pick<MarkupRecord, 'id' | 'images'>): Promise<BackfillResult> {
  let put = 0;
  let deleted = 0;
  /** Every leaf an attempt put items in (to take them away when the markup turns out deleted). */
  const touched = new Set<string>();
  return withBackoff(
    async (tried) => {
      const attempt = tried + 1;
      const before = await getThreadIndexState(markup.id);
      const { threads, messages } = await getConversation(markup.id);
      // Every leaf that has index partitions has a counter (`threadIndexWrites` adds it in the same
      // transaction); the leaves of the threads as read may be new, and an earlier attempt's leaves may have lost
      // their threads since (a markup deletion takes threads without moving `writes`): their items
      // are stray now, and their counter (0) is how a deletion finds any left.
      const leaves = [...new Set([...before.counted, ...touched, ...threads.map((thread) => leafOf(thread.resolved, thread.viewModeId))])];
      const [existing, legacy] = await Promise.all([
        indexItemKeysOf(markup.id, leaves),
        queryPrefix(markupPartition(markup.id), LAYOUT_1_PREFIX, { consistent: true }),
      ]);
      const wanted = new Map(threads.flatMap((thread) => indexItemsOf(markup, thread)).map((item) => [indexItemId(item), item]));
      // The page copies are threads, not keys of the conversation's index: kept below.
      const present = new Map(existing.filter((key) => key.PK !== pageCopyPartition(markup.id)).map((key) => [indexItemId(key), key]));
      const missing = [...wanted.entries()].filter(([id]) => !present.has(id)).map(([, item]) => item);
      const stray = [
        ...[...present.entries()].filter(([id]) => !wanted.has(id)).map(([, key]) => key),
        ...legacy.map((item) => ({ PK: item.PK as string, SK: item.SK as string })),
      ];
      for (const leaf of leaves) touched.add(leaf);
      await batchPut(missing);
      await batchDelete(stray);
      put += missing.length;
      deleted += stray.length;
      await failIfArmed('backfill-before-copies', markup.id);
      // Layout 3: every thread keeps a copy of its messages, and each user's marks on a thread are one
      // item. Layout 4: every thread has its page copy, at its revision (its writes keep it so).
      const copies = await pageCopiesOf(markup.id);
      for (const thread of threads) {
        if (!copyIsCurrent(thread, messages.get(thread.id) ?? [])) {
          // The thread changed since the conversation was read: that write moved `writes`, so read it all again.
          if (!(await embedMessages(thread, messages.get(thread.id) ?? [], (embedded) => [pageCopyPut(embedded)]))) return AGAIN;
          continue;
        }
        const copy = copies.get(thread.number);
        if ((copy?.threadId !== thread.id || copy.revision !== thread.revision) && !(await putPageCopyIfUnchanged(thread))) return AGAIN;
      }
      const numbers = new Set(threads.map((thread) => thread.number));
      for (const [number, copy] of copies) if (!numbers.has(number)) await deletePageCopyOfGoneThread(markup.id, number, copy.threadId);
      await foldLegacyReadMarks(markup.id);
      const counts = new Map<string, number>();
      for (const thread of threads)
        counts.set(leafOf(thread.resolved, thread.viewModeId), (counts.get(leafOf(thread.resolved, thread.viewModeId)) ?? 0) + 1);
      const names = Object.fromEntries(leaves.map((leaf, i) => [`#c${i}`, `c:${leaf}`]));
      const values = Object.fromEntries(leaves.map((leaf, i) => [`:c${i}`, counts.get(leaf) ?? 0]));
      const failed = await transactUnlessConditionFails([
        {
          Update: {
            TableName: getConfig().tableName,
            Key: threadIndexStateKey(markup.id),
            UpdateExpression: `SET entity = :entity, layout = :layout, writes = :writes${leaves.map((_, i) => `, #c${i} = :c${i}`).join('')}`,
            ConditionExpression: before.writes === 0 ? 'attribute_not_exists(writes) OR writes = :writes' : 'writes = :writes',
            ...(leaves.length > 0 ? { ExpressionAttributeNames: names } : {}),
            ExpressionAttributeValues: {
              ':entity': 'ThreadIndexState',
              ':layout': THREAD_INDEX_LAYOUT,
              ':writes': before.writes,
              ...values,
            },
          },
        },
        // A markup deleted meanwhile must not get its counters (and index) back.
        { ConditionCheck: { TableName: getConfig().tableName, Key: itemKey(markup.id), ConditionExpression: 'attribute_exists(PK)' } },
      ]);
      if (failed === undefined)
        return { markupId: markup.id, threads: threads.length, put, deleted, attempts: attempt, layout: THREAD_INDEX_LAYOUT };
      if (failed === 1) {
        // Its deletion may have finished before these items were put: take them away again.
        await batchDelete(await indexItemKeysOf(markup.id, [...touched]));
        return {
          markupId: markup.id,
          threads: threads.length,
          put,
          deleted,
          attempts: attempt,
          layout: THREAD_INDEX_LAYOUT,
          markupDeleted: true,
        };
      }
      return AGAIN;
    },
    // Again at once: the writes it lost to are done, not in the way.
    {
      attempts: 10,
      baseMs: 0,
      exhausted: () => new Error(`The threads of markup ${markup.id} kept changing during the backfill; run it again.`),
    },
  );
}

/** Ids of every markup that ever had a thread (its thread-number counter): a Scan, for the admin CLI's backfill only. */
export async function markupsWithThreads(): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of scanMatching({
    expression: 'entity = :entity',
    values: { ':entity': 'ThreadSequence' },
    projection: 'markupId',
  }))
    ids.push(item.markupId as string);
  return ids;
}
