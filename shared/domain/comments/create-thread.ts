import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { markupCommentUpdate } from '../../db/items.js';
import { viewModeCountUpdate } from '../../db/markup-records.js';
import { toMessageItem, toMessageReferenceItem, type Delta } from '../../db/messages.js';
import { timeOrderedId } from '../../db/core/ids.js';
import { readMarksUpdate } from '../../db/read-marks.js';
import { threadIndexStart, threadIndexWrites } from '../../db/thread-index.js';
import { nextThreadNumber, toThreadItem, toThreadReferenceItem, withCopyIfItFits, type ThreadRecord } from '../../db/threads.js';
import { failIfArmed } from '../../db/core/faults.js';
import { commit, putNew, type TransactItem } from '../../db/core/transact.js';
import type { AnnotationInput, ThreadView } from '../../schemas/threads.js';
import { loadMarkup } from '../markups/access.js';
import { explainMarkupRefusal, explainWriteRefusal, requireOpenForComments } from './access.js';
import { commentEvent } from './events.js';
import { newMessageRecord, prepareMessage, type ClipVideoInput } from './message-content.js';
import { locateOnPageScreenshot } from './page-location.js';
import { invalid, pinOf, type PinInput } from './pins.js';
import { readMark, readStateOfWriter } from './read-state.js';
import { toPublicThread, viewerFor } from './views.js';

export interface CreateThreadInput extends PinInput {
  projectId?: string;
  /** The first message, as a Delta or (`content`) as plain text: exactly one of the two. */
  message?: Delta;
  content?: string;
  attachments?: { fileId: string }[];
  clipVideos?: ClipVideoInput[];
  width?: number;
  height?: number;
  annotations?: AnnotationInput;
  requireDimensionsOverride?: boolean;
  priority?: number;
}

/**
 * The text of a thread's first message: `message` (a Delta, as the spec has it) or `content` (plain
 * text, as replies take it; DESIGN.md). One of them, never both: a thread has no earlier text for
 * the two to agree with, so two versions of it are a mistake to name, not to reconcile.
 */
function firstMessageText(input: CreateThreadInput): { message: Delta } | { content: string } {
  if (input.message !== undefined && input.content !== undefined) {
    throw invalid(
      'content',
      'must not be sent with message: give the first message either as message (a Delta) or as content (plain text)',
    );
  }
  if (input.message !== undefined) return { message: input.message };
  if (input.content !== undefined) return { content: input.content };
  throw invalid('message', 'is required: give the first message as message (a Delta) or as content (plain text)');
}

/** POST /threads: a numbered thread with its first message, written whole or not at all. */
export async function createThread(principal: Principal, input: CreateThreadInput): Promise<ThreadView> {
  // A token bound to one markup names it already (spec: customer JWT exchange, `markupId`).
  const markupId = input.projectId || (principal.kind === 'endUser' ? principal.markupId : undefined);
  if (!markupId) throw invalid('projectId', 'is required: the id of the markup to comment on');
  const access = await loadMarkup(principal, markupId, { consistent: true, plan: false });
  const { markup } = access;
  requireOpenForComments(markup);
  const at = Date.now();
  const pin = pinOf(markup, input, at);
  const prepared = await prepareMessage(
    access,
    { ...firstMessageText(input), attachments: input.attachments, clipVideos: input.clipVideos },
    { at },
  );
  if (!prepared.content?.trim() && !prepared.attachments?.length && !prepared.clipVideos?.length) {
    throw invalid(
      input.content === undefined ? 'message' : 'content',
      'must say something: a thread opens with a message that has text, attachments or clip videos',
    );
  }

  // The markup's first thread starts it in the indexed layout with its number (a markup with older
  // threads waits for the backfill); a markup deleted since it was read gets no number.
  const number = await nextThreadNumber(markup.id, threadIndexStart(markup.id));
  if (number === undefined) return explainMarkupRefusal(markup.id);
  // Time-ordered, so the read marks of threads created one after another sit side by side (`getReadMarksOfPage`).
  const threadId = timeOrderedId(at);
  const messageId = randomUUID();
  const thread: ThreadRecord = {
    id: threadId,
    markupId: markup.id,
    workspaceId: markup.workspaceId,
    organizationId: markup.organizationId,
    number,
    userId: principal.userId,
    createdAt: at,
    modifiedAt: at,
    lastActivityAt: at,
    resolved: false,
    priority: input.priority ?? null,
    revision: 1,
    messageIds: [messageId],
    annotations: input.annotations ?? null,
    width: input.width ?? null,
    height: input.height ?? null,
    ...pin,
  };
  const message = newMessageRecord(markup, { threadId, messageId, userId: principal.userId }, prepared, at, thread.revision);
  thread.messages = [message];
  const reference = { threadId, markupId: markup.id, workspaceId: markup.workspaceId, organizationId: markup.organizationId };
  // The thread as its item stores it: its page copy is the same record.
  const stored = withCopyIfItFits(thread);
  const items: TransactItem[] = [
    markupCommentUpdate(markup, { at, activeDelta: 1, open: true }),
    putNew(toThreadItem(stored)),
    putNew(toThreadReferenceItem(reference)),
    putNew(toMessageItem(message)),
    putNew(toMessageReferenceItem({ ...reference, messageId })),
    readMarksUpdate(markup.id, [
      readMark(principal.userId, 'thread', threadId, threadId, thread.revision, at),
      readMark(principal.userId, 'message', messageId, threadId, message.threadRevision, at),
    ]),
    ...(thread.viewModeId ? [viewModeCountUpdate(markup.id, thread.viewModeId, 1)] : []),
    ...prepared.writes,
    ...threadIndexWrites(markup, undefined, stored),
    commentEvent('comment_created', markup, { threadId, messageId }, principal.userId),
  ];
  await commit(items, (index) => (index === 0 ? explainMarkupRefusal(markup.id) : explainWriteRefusal()));
  // A crash right after the commit (tests): the thread and its event are already both there.
  await failIfArmed('after-thread-commit', markup.id);
  await locateOnPageScreenshot(markup, thread);
  const viewer = await viewerFor(principal, access, [principal.userId]);
  return toPublicThread(thread, [message], viewer, readStateOfWriter([message], at));
}
