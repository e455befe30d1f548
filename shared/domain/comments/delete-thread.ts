import { authorizeOnRecordOf } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { markupCommentUpdate } from '../../db/items.js';
import { viewModeCountUpdate } from '../../db/markup-records.js';
import { messageKey, messageReferenceKey } from '../../db/messages.js';
import { readMarkKeysOf } from '../../db/read-marks.js';
import { storageChange } from '../../db/storage.js';
import { threadIndexWrites } from '../../db/thread-index.js';
import { getThreadWithMessages, storedObjectsOf, threadDelete } from '../../db/threads.js';
import { batchDelete, commit, fromFreshReads, STALE, type TransactItem } from '../../db/core/transact.js';
import { deleteObjectsLater } from '../../events/jobs.js';
import { requireVersion, type IfMatch } from '../common/versions.js';
import { explainMarkupRefusal, loadThreadAccess, threadNotFound } from './access.js';

/**
 * Deletes a thread with all its messages, attachments and screenshot. The thread, its reference,
 * the markup's counters and the storage counters change in one transaction conditioned on the
 * thread's revision (a message added meanwhile makes it read again); the messages follow, and the
 * objects are queued for deletion. Who may delete whose thread is `thread:delete` in the permission table.
 */
export async function deleteThread(principal: Principal, threadId: string, ifMatch?: IfMatch): Promise<void> {
  const access = await loadThreadAccess(principal, threadId);
  await fromFreshReads(`Thread ${threadId}`, async () => {
    const found = await getThreadWithMessages(access.markup.id, threadId);
    if (!found) throw threadNotFound(threadId);
    const { thread, messages } = found;
    authorizeOnRecordOf(principal, access.role, thread.userId);
    // `threadDelete` holds only at this revision: a change after this check is read again and refused here.
    requireVersion(ifMatch, thread.revision, `Thread ${threadId}`);
    const stored = storedObjectsOf(thread, messages);
    const at = Date.now();
    const items: TransactItem[] = [
      ...threadDelete(thread),
      markupCommentUpdate(access.markup, { at, activeDelta: thread.resolved ? 0 : -1 }),
      ...(thread.viewModeId ? [viewModeCountUpdate(access.markup.id, thread.viewModeId, -1)] : []),
      ...(stored.attachmentBytes + stored.screenshotBytes > 0
        ? [{ Update: storageChange(thread.organizationId, { attachments: -stored.attachmentBytes, images: -stored.screenshotBytes }) }]
        : []),
      ...threadIndexWrites(access.markup, thread, undefined),
    ];
    if (!(await commit(items, (index) => (index === 0 ? 'retry' : explainMarkupRefusal(access.markup.id))))) return STALE;
    await batchDelete([
      ...messages.flatMap((message) => [messageKey(access.markup.id, threadId, message.id), messageReferenceKey(message.id)]),
      ...(await readMarkKeysOf(access.markup.id, threadId)),
    ]);
    await deleteObjectsLater(stored.keys, { threadId });
  });
}
