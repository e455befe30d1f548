import type { Principal } from '../../auth/principal.js';
import { markupCommentUpdate } from '../../db/items.js';
import { readMarksUpdate } from '../../db/read-marks.js';
import { unreadCountInvalidation } from '../../db/unread-counts.js';
import { threadIndexWrites } from '../../db/thread-index.js';
import {
  getThreadRecord,
  threadReplace,
  threadUnchanged,
  withCopyIfItFits,
  type ThreadAnchor,
  type ThreadRecord,
} from '../../db/threads.js';
import { commit, fromFreshReads, nextTime, STALE, type TransactItem } from '../../db/core/transact.js';
import { BadRequestError } from '../../errors.js';
import { requireVersion, type IfMatch } from '../common/versions.js';
import { isHttpUrl } from '../../schemas/builders.js';
import type { BrowserContextInput, ThreadRecordView } from '../../schemas/threads.js';
import { explainMarkupRefusal, loadThreadAccess, loadThreadAccessToChange, threadNotFound, type ThreadAccess } from './access.js';
import { commentEvent } from './events.js';
import { locateOnPageScreenshot } from './page-location.js';
import { elementsOf, invalid, parentsOf, type ElementInput, type ElementParentInput } from './pins.js';
import { readMark } from './read-state.js';
import { threadRecordOf } from './views.js';
import { withArticle } from '../../english.js';

/**
 * Changes to one thread after its creation: resolving, moving its pin, marking it read. Each reads
 * the thread and writes it conditioned on the revision it read, again from a fresh read when a
 * concurrent change got there first.
 */

/** The thread record (without messages), or 404. */
export async function loadThreadRecord(markupId: string, threadId: string): Promise<ThreadRecord> {
  const thread = await getThreadRecord(markupId, threadId);
  if (!thread) throw threadNotFound(threadId);
  return thread;
}

/**
 * Reads a thread, applies `change` and writes it with `extra` items in one transaction, from a
 * fresh read again when a concurrent change got there first. `change` returns undefined when
 * there is nothing to do.
 */
export async function changeThread(
  access: ThreadAccess,
  change: (thread: ThreadRecord) => ThreadRecord | undefined,
  extra: (before: ThreadRecord, after: ThreadRecord) => TransactItem[] = () => [],
  ifMatch?: IfMatch,
): Promise<{ before: ThreadRecord; after: ThreadRecord; changed: boolean }> {
  return fromFreshReads(`Thread ${access.reference.threadId}`, async () => {
    const before = await loadThreadRecord(access.markup.id, access.reference.threadId);
    // The write below holds only at this revision, so a change landing after this check is read again and refused here.
    requireVersion(ifMatch, before.revision, `Thread ${access.reference.threadId}`);
    const next = change(before);
    if (!next) return { before, after: before, changed: false };
    // The thread as its item will store it: its page copy is the same record.
    const written = withCopyIfItFits({ ...next, revision: before.revision + 1 });
    const committed = await commit(
      [threadReplace(before, written), ...extra(before, next), ...threadIndexWrites(access.markup, before, written)],
      (index) => (index === 0 ? 'retry' : explainMarkupRefusal(access.markup.id)),
    );
    return committed ? { before, after: { ...next, revision: before.revision + 1 }, changed: true } : STALE;
  });
}

/** POST /threads/:id/resolve: `{ threadId, modifiedAt }`; resolving a resolved thread changes nothing. */
export async function resolveThread(
  principal: Principal,
  threadId: string,
  ifMatch?: IfMatch,
): Promise<{ threadId: string; modifiedAt: number }> {
  const { after } = await setResolved(principal, threadId, true, ifMatch);
  return { threadId, modifiedAt: after.modifiedAt };
}

/** POST /threads/:id/unresolve: `{ threadId }`. */
export async function unresolveThread(principal: Principal, threadId: string, ifMatch?: IfMatch): Promise<{ threadId: string }> {
  await setResolved(principal, threadId, false, ifMatch);
  return { threadId };
}

/** Resolving takes the thread out of the markup's `activeThreads`; unresolving puts it back. */
async function setResolved(principal: Principal, threadId: string, resolved: boolean, ifMatch?: IfMatch) {
  const access = await loadThreadAccessToChange(principal, threadId);
  const result = await changeThread(
    access,
    (thread) => {
      if (thread.resolved === resolved) return undefined;
      const at = nextTime(thread.modifiedAt);
      return { ...thread, resolved, modifiedAt: at, lastActivityAt: at };
    },
    (_before, after) => [
      markupCommentUpdate(access.markup, { at: after.modifiedAt, activeDelta: resolved ? -1 : 1 }),
      commentEvent(resolved ? 'comment_resolved' : 'comment_unresolved', access.markup, { threadId }, principal.userId),
    ],
    ifMatch,
  );
  return { ...result, access };
}

/**
 * POST /threads/:id/read: the caller has seen the thread and every message as they are now. The
 * mark records the thread's revision and is written only while the thread is still at it, so a
 * reply or edit that lands meanwhile stays unread (the mark is taken again from a fresh read).
 */
export async function markThreadRead(principal: Principal, threadId: string): Promise<void> {
  const access = await loadThreadAccess(principal, threadId);
  await fromFreshReads(`Thread ${threadId}`, async () => {
    const thread = await loadThreadRecord(access.markup.id, threadId);
    const mark = readMark(principal.userId, 'thread', threadId, threadId, thread.revision, Date.now());
    return (await commit(
      [threadUnchanged(thread), readMarksUpdate(access.markup.id, [mark]), unreadCountInvalidation(access.markup.id, principal.userId)],
      () => 'retry',
    ))
      ? undefined
      : STALE;
  });
}

export interface MovePinInput {
  url?: string;
  canonicalUrl?: string;
  elements?: ElementInput[];
  browserContext?: BrowserContextInput;
  elementParents?: ElementParentInput[];
  anchor?: ThreadAnchor;
  viewportXPercentage?: number;
  viewportYPercentage?: number;
}

/**
 * PATCH /threads/:id/move-pin. A webpage pin moves to new elements (and page address, parents,
 * browser context); an image, PDF or video pin to new offsets (`viewportXPercentage`,
 * `viewportYPercentage`). Answers the thread record of the spec.
 */
export async function movePin(principal: Principal, threadId: string, input: MovePinInput, ifMatch?: IfMatch): Promise<ThreadRecordView> {
  const access = await loadThreadAccessToChange(principal, threadId);
  if (input.url !== undefined && !isHttpUrl(input.url)) throw invalid('url', 'must be an absolute http or https URL');
  const { after } = await changeThread(
    access,
    (thread) => {
      const at = nextTime(thread.modifiedAt);
      const moved: ThreadRecord = { ...thread, modifiedAt: at, lastActivityAt: at };
      if (thread.kind === 'webpage') {
        if (
          input.url === undefined &&
          input.elements === undefined &&
          input.viewportXPercentage === undefined &&
          input.viewportYPercentage === undefined
        ) {
          throw new BadRequestError('Say where the pin goes: elements (with url) or viewportXPercentage and viewportYPercentage.');
        }
        if (input.url !== undefined) moved.url = input.url;
        if (input.canonicalUrl !== undefined) moved.canonicalUrl = input.canonicalUrl;
        if (input.elements !== undefined) moved.elements = elementsOf(input.elements, at);
        // New elements without new selectors: the old ones would name the old element, so they go.
        if (input.anchor !== undefined) moved.anchor = input.anchor;
        else if (input.elements !== undefined) delete moved.anchor;
        if (input.elementParents !== undefined) moved.parents = parentsOf(input.elementParents, at);
        if (input.browserContext !== undefined) moved.browserContext = input.browserContext;
      } else if (input.viewportXPercentage === undefined || input.viewportYPercentage === undefined) {
        throw new BadRequestError(
          `${withArticle(thread.kind, { capital: true })} pin moves by offsets: send viewportXPercentage and viewportYPercentage (0 to 100).`,
        );
      }
      if (input.viewportXPercentage !== undefined) moved.offsetXPercentage = input.viewportXPercentage;
      if (input.viewportYPercentage !== undefined) moved.offsetYPercentage = input.viewportYPercentage;
      return moved;
    },
    () => [commentEvent('comment_updated', access.markup, { threadId }, principal.userId)],
    ifMatch,
  );
  if (input.elements !== undefined) await locateOnPageScreenshot(access.markup, after);
  return threadRecordOf(after);
}
