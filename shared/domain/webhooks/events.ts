import { getStoredEventBody, storeEventBodyOnce } from '../../db/event-bodies.js';
import type { DeliverableEvent } from '../../db/events.js';
import { getItem, type MarkupRecord } from '../../db/items.js';
import { getPlan } from '../../db/plans.js';
import { getReadMarksOf } from '../../db/read-marks.js';
import { getThreadWithMessages } from '../../db/threads.js';
import { getUsers, type User } from '../../db/users.js';
import type { MarkupView } from '../../schemas/markups.js';
import type { AuthorView, MessageView, ThreadView } from '../../schemas/threads.js';
import { MAX_URL_TTL_SECONDS } from '../../storage/urls.js';
import { indexReadMarks, readStateOf } from '../comments/read-state.js';
import { authorOf, toPublicThread, type ViewerContext } from '../comments/views.js';
import { INCLUDE_ALL, toPublicMarkup } from '../markups/view.js';
import { resolveAppUrl } from '../organizations/app-url.js';

/** The envelope of a webhook delivery (DESIGN.md "Webhook deliveries"). */
export interface EventEnvelope {
  id: string;
  type: DeliverableEvent['type'];
  workspaceId: string;
  createdAt: string;
  data: {
    markup: MarkupView | null;
    user: AuthorView | null;
    comment?: ThreadView | null;
    message?: MessageView | null;
  };
}

/**
 * The body of an event's deliveries, exactly the bytes that are signed and sent: `{ id, type,
 * workspaceId, createdAt, data: { markup, user, comment?, message? } }` (DESIGN.md "Webhook
 * deliveries"). Built at the event's first delivery and stored (`storeEventBodyOnce`), so every
 * attempt, redelivery and registration gets the same bytes, even after the markup changed; two
 * racing first deliveries both answer the winner's body. What the body holds: see `buildEventEnvelope`.
 */
export async function eventBody(event: DeliverableEvent): Promise<string> {
  const stored = await getStoredEventBody(event.id);
  if (stored !== undefined) return stored;
  return storeEventBodyOnce(event.id, JSON.stringify(await buildEventEnvelope(event)));
}

/**
 * The envelope of an event as its records are now. The shapes are the API's own:
 * - `markup`: the Markup of `GET /markups/:id` (files included: `images`, `document`, `video`),
 *   with `scopes` as a plain workspace key (an owner) sees them, the integration that receives
 *   webhooks; file URLs are presigned for S3's longest lifetime (7 days), as retries span about 28 h.
 * - `user`: the actor as the author object of threads and messages (`id`, `createdAt`,
 *   `modifiedAt`, `name`, `guest`): the event's `userId` (the API key's user, the member, or the
 *   end user). Events no principal caused name the markup's creator (`markup_ready` from the
 *   conversion worker) or the thread's author (`comment_screenshot_failed`); `webhook.test` the
 *   caller. null when no one can be named (a worker event whose markup or thread is gone).
 * - `comment` (comment events): the Thread of `GET /threads/:id`, its scopes as an owner sees them
 *   and its read state the actor's; `message` (events with a message: reply created, message
 *   edited): that message as the thread lists it.
 * Records deleted before the first delivery are null (`markup: null`, `comment: null`,
 * `message: null`); the keys of the event's kind are always present. Never throws for a gone record.
 */
export async function buildEventEnvelope(event: DeliverableEvent): Promise<EventEnvelope> {
  const envelope = { id: event.id, type: event.type, workspaceId: event.workspaceId, createdAt: event.createdAt };
  if (event.type === 'webhook.test') return { ...envelope, data: { markup: null, user: await userOf(event.userId) } };
  const markup = event.markupId ? await liveMarkup(event.markupId, event.workspaceId) : undefined;
  const found = markup && event.threadId ? await getThreadWithMessages(markup.id, event.threadId) : undefined;
  const actorId = event.userId ?? (event.type === 'comment_screenshot_failed' ? found?.thread.userId : markup?.createdBy);
  const authorIds = found ? [found.thread.userId, ...found.messages.map((message) => message.userId)] : [];
  const users = await usersById([...(actorId ? [actorId] : []), ...authorIds]);
  const user = actorId ? authorOf(actorId, users) : null;
  if (!markup) return { ...envelope, data: { markup: null, user, ...commentKeys(event, null, null) } };
  const publicMarkup = await toPublicMarkup(markup, {
    role: 'owner',
    plan: await getPlan(markup.organizationId),
    // Links outside a request: the app's origin (markupUrl, and thumbnailUrl through its /api/*);
    // without one (no APP_URL, no table setting yet) links are root-relative, never a wrong host.
    appUrl: (await resolveAppUrl()) ?? '',
    include: INCLUDE_ALL,
    fileUrlTtlSeconds: MAX_URL_TTL_SECONDS,
  });
  if (!event.threadId) return { ...envelope, data: { markup: publicMarkup, user } };
  if (!found) return { ...envelope, data: { markup: publicMarkup, user, ...commentKeys(event, null, null) } };
  const viewer: ViewerContext = { userId: actorId ?? '', role: 'owner', markup, users, urlTtlSeconds: MAX_URL_TTL_SECONDS };
  const messageIds = found.messages.map((message) => message.id);
  const marks = actorId ? await getReadMarksOf(markup.id, actorId, [found.thread.id], messageIds) : [];
  const comment = await toPublicThread(
    found.thread,
    found.messages,
    viewer,
    readStateOf(found.thread, found.messages, indexReadMarks(marks)),
  );
  const message = comment.messages.find((listed) => listed.id === event.messageId) ?? null;
  return { ...envelope, data: { markup: publicMarkup, user, ...commentKeys(event, comment, message) } };
}

/** `comment` on comment events, and `message` on those that name one, present even when gone (null). */
export function commentKeys(
  event: { threadId?: string; messageId?: string },
  comment: ThreadView | null,
  message: MessageView | null,
): Pick<EventEnvelope['data'], 'comment' | 'message'> {
  return { ...(event.threadId ? { comment } : {}), ...(event.messageId ? { message } : {}) };
}

/** The markup, unless it was deleted (or the id names something else, or another workspace's item). */
async function liveMarkup(markupId: string, workspaceId: string): Promise<MarkupRecord | undefined> {
  const item = await getItem(markupId, true);
  return item?.kind === 'markup' && item.workspaceId === workspaceId ? item : undefined;
}

async function usersById(userIds: readonly string[]): Promise<Map<string, User>> {
  if (userIds.length === 0) return new Map();
  return new Map((await getUsers([...new Set(userIds)])).map((user): [string, User] => [user.id, user]));
}

async function userOf(userId: string | undefined): Promise<EventEnvelope['data']['user']> {
  return userId ? authorOf(userId, await usersById([userId])) : null;
}
