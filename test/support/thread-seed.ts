import { randomUUID } from 'node:crypto';
import { timeOrderedId } from '../../shared/db/core/ids.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { toMessageItem, toMessageReferenceItem, type MessageRecord } from '../../shared/db/messages.js';
import { readMarkKey, toReadMarkItems, type ReadMark } from '../../shared/db/read-marks.js';
import { THREAD_INDEX_LAYOUT, threadIndexSeedItems } from '../../shared/db/thread-index.js';
import { copyFits, threadSequenceKey, toThreadItem, toThreadReferenceItem, type ThreadRecord } from '../../shared/db/threads.js';
import { batchPut } from '../../shared/db/core/transact.js';
import { delta } from './threads.js';

/**
 * Large conversations written straight to the table (thousands of threads through the API would
 * take minutes), item for item as the API writes them: threads with their messages, references and
 * the writers' read marks, and, unless `layout: 'old'`, the thread index the list reads
 * (`threadIndexSeedItems`). For tests and the bench only.
 *
 * Layouts (`shared/db/thread-index.ts`, "Migration"): `current` (the default) as today's writes
 * leave a markup; `2` as layout 2 left it (threads without a copy of their messages, each message
 * mark an item of its own); `old` as markups before the index (layout 2's items, no index).
 */
export type SeedLayout = 'current' | '2' | 'old';

/** A message's mark as an item of its own, as layouts before 3 wrote it. */
export const legacyMarkItem = (markupId: string, mark: ReadMark) => ({
  ...readMarkKey(markupId, mark.userId, mark.subjectId),
  entity: 'ReadMark',
  markupId,
  ...mark,
});

/**
 * An older release's mark of one message, as an item of its own: `userId` saw `message` as written
 * (its `threadRevision`, at its `createdAt`) unless `seen` says a later revision or time.
 */
export const legacyMessageMarkItem = (
  markupId: string,
  userId: string,
  message: Pick<MessageRecord, 'id' | 'threadId' | 'threadRevision' | 'createdAt'>,
  seen: Partial<Pick<ReadMark, 'seenRevision' | 'seenAt'>> = {},
) =>
  legacyMarkItem(markupId, {
    userId,
    subject: 'message',
    subjectId: message.id,
    threadId: message.threadId,
    seenRevision: seen.seenRevision ?? message.threadRevision,
    seenAt: seen.seenAt ?? message.createdAt,
  });

const BROWSER_CONTEXT = {
  browserName: 'Chrome',
  browserVersion: '120',
  os: 'macOS',
  osVersion: '14',
  osVersionName: 'Sonoma',
  platform: 'desktop',
  screenWidth: 1440,
  screenHeight: 900,
  viewportWidth: 1440,
  viewportHeight: 800,
};

export const seedText = (label: string) =>
  `${label}: the hero spacing looks off next to the navigation, and the call to action wraps on narrow screens. Could we check it again?`;

export interface SeededThread {
  thread: ThreadRecord;
  messages: MessageRecord[];
  items: Record<string, unknown>[];
}

/**
 * A webpage thread as POST /threads writes it, opened by the first of `messageAuthors`, with the
 * others' replies as POST /threads/:id/messages adds them (each moves `lastActivityAt` and
 * `revision`), their writers' read marks, and with `readBy` that user's mark of the whole thread.
 */
export function seededThread(
  markup: MarkupRecord,
  number: number,
  messageAuthors: string[],
  at: number,
  options: { readBy?: string; viewModeId?: string; resolved?: boolean; layout?: SeedLayout } = {},
): SeededThread {
  // Today's writes give threads time-ordered ids; older releases gave random ones.
  const id = (options.layout ?? 'current') === 'current' ? timeOrderedId(at) : randomUUID();
  const scope = { markupId: markup.id, workspaceId: markup.workspaceId, organizationId: markup.organizationId };
  const last = at + messageAuthors.length - 1;
  const thread: ThreadRecord = {
    id,
    ...scope,
    number,
    userId: messageAuthors[0]!,
    createdAt: at,
    modifiedAt: at,
    lastActivityAt: last,
    resolved: options.resolved ?? number % 7 === 0,
    priority: null,
    revision: messageAuthors.length,
    messageIds: [],
    annotations: null,
    width: null,
    height: null,
    kind: 'webpage',
    url: 'https://example.com/',
    canonicalUrl: 'https://example.com/',
    elements: [
      { id: randomUUID(), createdAt: at, modifiedAt: at, path: 'html > body > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 },
    ],
    parents: [
      {
        id: randomUUID(),
        createdAt: at,
        modifiedAt: at,
        path: 'html > body',
        depth: 1,
        url: 'https://example.com/',
        canonicalUrl: 'https://example.com/',
      },
    ],
    browserContext: BROWSER_CONTEXT,
    viewModeId: options.viewModeId ?? 'a673a36a-f762-44d0-b3a9-09825d75b599',
    offsetXPercentage: 25,
    offsetYPercentage: 40,
  };
  const messages: MessageRecord[] = messageAuthors.map((userId, index) => {
    const content = seedText(`Message ${index + 1} of thread ${number}`);
    return {
      id: randomUUID(),
      threadId: id,
      ...scope,
      userId,
      createdAt: at + index,
      modifiedAt: at + index,
      modifiedBy: userId,
      threadRevision: index + 1,
      content,
      delta: delta(content),
      mentionIds: [],
      attachments: [],
      clipVideos: [],
    };
  });
  thread.messageIds = messages.map((message) => message.id);
  const marks = new Map<string, ReadMark>();
  const mark = (userId: string, subject: ReadMark['subject'], subjectId: string, seenRevision: number, seenAt: number) =>
    marks.set(`${userId}#${subjectId}`, { userId, subject, subjectId, threadId: id, seenRevision, seenAt });
  mark(thread.userId, 'thread', id, 1, at);
  for (const message of messages) mark(message.userId, 'message', message.id, message.threadRevision, message.createdAt);
  if (options.readBy) mark(options.readBy, 'thread', id, thread.revision, last + 1);
  const current = (options.layout ?? 'current') === 'current';
  // A copy only while it fits, as the writes keep it (a thread past the limit keeps `messageIds`).
  if (current && copyFits(thread, messages)) thread.messages = messages;
  const legacyMarks = [...marks.values()].filter((readMark) => !current && readMark.subject === 'message');
  const items = [
    toThreadItem(thread),
    toThreadReferenceItem({ threadId: id, ...scope }),
    ...messages.flatMap((message) => [toMessageItem(message), toMessageReferenceItem({ threadId: id, ...scope, messageId: message.id })]),
    ...toReadMarkItems(
      markup.id,
      [...marks.values()].filter((readMark) => !legacyMarks.includes(readMark)),
    ),
    ...legacyMarks.map((readMark) => legacyMarkItem(markup.id, readMark)),
  ];
  return { thread, messages, items };
}

/**
 * Writes `count` threads (numbers 1..count) of `messagesPerThread` messages by `authorIds` in turn
 * to a markup that has no threads yet, with batch writes, and moves its thread-number counter past
 * them, in `layout` (above).
 */
export async function seedConversation(
  markup: MarkupRecord,
  options: {
    count: number;
    authorIds: string[];
    messagesPerThread?: number;
    layout?: SeedLayout;
    firstNumber?: number;
    readBy?: string;
    viewModeIds?: string[];
  },
): Promise<SeededThread[]> {
  const first = options.firstNumber ?? 1;
  // Activity times in the past (10 ms a thread), so threads written through the API later are the latest.
  const base = Date.now() - (first + options.count + 1) * 10;
  const seeded: SeededThread[] = [];
  for (let number = first; number < first + options.count; number += 1) {
    const writers = Array.from(
      { length: options.messagesPerThread ?? 3 },
      (_, index) => options.authorIds[(number + index) % options.authorIds.length]!,
    );
    const viewModeId = options.viewModeIds?.[number % options.viewModeIds.length];
    seeded.push(
      seededThread(markup, number, writers, base + number * 10, {
        readBy: options.readBy && number % 3 === 0 ? options.readBy : undefined,
        viewModeId,
        layout: options.layout,
      }),
    );
  }
  const items = seeded.flatMap((entry) => entry.items);
  items.push({ ...threadSequenceKey(markup.id), entity: 'ThreadSequence', markupId: markup.id, lastNumber: first + options.count - 1 });
  if (options.layout !== 'old')
    items.push(
      ...threadIndexSeedItems(
        markup,
        seeded.map((entry) => entry.thread),
        options.layout === '2' ? 2 : THREAD_INDEX_LAYOUT,
      ),
    );
  await batchPut(items);
  return seeded;
}
