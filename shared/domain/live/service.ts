import { randomBytes } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { authorizeCredential, withPermission } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { forEachLimit } from '../../concurrency.js';
import { getConfig } from '../../config.js';
import { eventsOfItem, type EventRecord } from '../../db/events.js';
import {
  allLiveConnections,
  deleteLiveConnection,
  deleteLiveSubscription,
  getLiveConnection,
  hashLiveTicket,
  insertLiveTicket,
  liveSubscriptionsOf,
  putLiveConnection,
  SUBSCRIPTION_OPENING,
  takeLiveTicket,
  type StoredPrincipal,
} from '../../db/live.js';
import { matchesStreamFilter } from '../../events/outbox-stream.js';
import { ServiceError, ServiceUnavailableError } from '../../errors.js';
import { logger } from '../../logger.js';
import { loadMarkup } from '../markups/access.js';
import { eventBody } from '../webhooks/events.js';
import { credentialAlive, credentialChecks, credentialKeyOf, principalOf, storedPrincipalOf } from './credentials.js';
import { markupEventLog, seqOf, type MarkupEventLog } from './log.js';
import { CLOSE, errorMessage, eventMessageText, messageText, parseClientMessage, subscribedMessage } from './protocol.js';

/** How long a ticket may wait for its connection (DESIGN.md "Live updates": 60 s). */
export const LIVE_TICKET_TTL_MS = 60_000;

/** Log events read per catch-up page. */
const CATCH_UP_PAGE = 100;

/** Subscribers one event is sent to at once. */
const DELIVERY_CONCURRENCY = 32;

/** What a subscription's seq claim answers (`LiveTransport.deliver`). */
export type DeliveryOutcome =
  /** Claimed and sent. */
  | { kind: 'sent' }
  /** Not the next seq of the subscription; `sent` is its last seq sent (undefined: no such subscription). */
  | { kind: 'not-next'; sent?: number }
  /** The connection is gone (it was forgotten). */
  | { kind: 'gone' };

/**
 * Where live messages go: the local gateway's sockets, or API Gateway's connections
 * (PostToConnection) deployed. Each subscription has one "last seq sent", claimed one seq at a time
 * (`deliver` sends seq only right after seq - 1): that is what keeps a catch-up and the fan-out,
 * racing on one subscription, from sending an event twice or skipping one.
 */
export interface LiveTransport {
  /** Sends a message that carries no seq (`subscribed`, `error`); false when the connection is gone. */
  send(connectionId: string, text: string): Promise<boolean>;
  /**
   * Records a subscription as opening (no event may go out under it yet), with the markup's
   * workspace as authorized; false when the connection is gone.
   */
  open(connectionId: string, markupId: string, principal: StoredPrincipal, workspaceId: string): Promise<boolean>;
  /** The `subscribed` answer went out: the next event sent is `sent + 1`. */
  start(connectionId: string, markupId: string, sent: number): Promise<void>;
  /** Sends `text` as event `seq` if `seq` is the subscription's next one. */
  deliver(connectionId: string, markupId: string, seq: number, text: string): Promise<DeliveryOutcome>;
  /** Ends a connection with a close code and reason, and forgets it. */
  close(connectionId: string, code: number, reason: string): Promise<void>;
}

/**
 * A ticket for `POST /live/tickets`: a random id, stored (hashed) with the principal it stands for,
 * valid 60 s, single use. Any live credential (`authorizeCredential`); each subscription on the
 * socket is authorized on its own.
 */
export async function issueLiveTicket(caller: Principal, at?: number): Promise<{ url: string; expiresAt: string }> {
  const principal = await authorizeCredential(caller);
  const now = at ?? Date.now();
  const liveUrl = getConfig().liveUrl;
  if (!liveUrl) throw new ServiceUnavailableError('Live updates are not configured on this deployment (no LIVE_URL).');
  const ticket = randomBytes(32).toString('base64url');
  const expiresAt = now + LIVE_TICKET_TTL_MS;
  await insertLiveTicket(hashLiveTicket(ticket), { principal: storedPrincipalOf(principal), expiresAt });
  return { url: `${liveUrl}?ticket=${encodeURIComponent(ticket)}`, expiresAt: new Date(expiresAt).toISOString() };
}

export type ConnectAnswer = { ok: true; principal: StoredPrincipal } | { ok: false; status: 401; detail: string };

/**
 * A connection's start (`$connect`): takes its ticket (once; never after 60 s) and records the
 * connection with the ticket's principal, unless the credential died since the ticket was issued.
 */
export async function connectLive(ticket: string | undefined, connectionId: string, now = Date.now()): Promise<ConnectAnswer> {
  const refused = {
    ok: false as const,
    status: 401 as const,
    detail: 'The ticket is missing, unknown, used or expired: ask POST /api/v2/live/tickets for a new one.',
  };
  if (!ticket || ticket.length > 200) return refused;
  const taken = await takeLiveTicket(hashLiveTicket(ticket), now);
  if (!taken) return refused;
  if (!(await credentialAlive(taken.principal)))
    return { ok: false, status: 401, detail: 'The credential the ticket was issued to is no longer valid.' };
  await putLiveConnection({ connectionId, principal: taken.principal, connectedAt: now });
  return { ok: true, principal: taken.principal };
}

/** A connection's end (`$disconnect`, or the socket closed): forgets it and its subscriptions. */
export async function disconnectLive(connectionId: string): Promise<void> {
  await deleteLiveConnection(connectionId);
}

/**
 * One client message (`$default`): a subscribe is authorized like `GET /markups/{id}` (the same
 * loader, the same permission), answered `subscribed` with the markup's last seq, then caught up
 * from `after` out of the log; a refusal is an `error` message with the status the GET would answer.
 */
export async function receiveLive(
  connectionId: string,
  text: string,
  transport: LiveTransport,
  log: MarkupEventLog = markupEventLog,
): Promise<void> {
  const parsed = parseClientMessage(text);
  if (!parsed.ok) {
    await transport.send(connectionId, messageText(parsed.error));
    return;
  }
  const { markupId, after } = parsed.message;
  const connection = await getLiveConnection(connectionId);
  if (!connection) return;
  if (!(await credentialAlive(connection.principal))) {
    await transport.close(connectionId, CLOSE.credentialGone.code, CLOSE.credentialGone.reason);
    return;
  }
  const access = await readRefusal(connection.principal, markupId);
  if ('refusal' in access) {
    await transport.send(connectionId, messageText(access.refusal));
    return;
  }
  const last = await log.lastSeq(markupId);
  if (after !== undefined && after > last) {
    await transport.send(
      connectionId,
      messageText(
        errorMessage(markupId, 400, `"after" is beyond the markup's last seq; subscribe without it, or with a seq you received.`),
      ),
    );
    return;
  }
  if (!(await transport.open(connectionId, markupId, connection.principal, access.workspaceId))) return;
  if (!(await transport.send(connectionId, messageText(subscribedMessage(markupId, last))))) return;
  await transport.start(connectionId, markupId, after ?? last);
  await catchUp(connectionId, markupId, after ?? last, transport, log);
}

/**
 * The `error` message a subscriber gets when it may not read the markup (authorized like `GET
 * /markups/{id}`: the same loader, permission, status and detail), or undefined when it may.
 */
async function readRefusal(
  principal: StoredPrincipal,
  markupId: string,
): Promise<{ refusal: ReturnType<typeof errorMessage> } | { workspaceId: string }> {
  try {
    const { markup } = await loadMarkup(withPermission(principalOf(principal), 'markup:read'), markupId);
    return { workspaceId: markup.workspaceId };
  } catch (error) {
    if (!(error instanceof ServiceError) || error.status >= 500) throw error;
    return { refusal: errorMessage(markupId, error.status, error.detail) };
  }
}

/**
 * Sends a subscription what the log holds after `sent`, in order, each event claimed (so whatever
 * the fan-out sent meanwhile is not sent again), until the log has nothing newer or another sender
 * is ahead.
 */
async function catchUp(connectionId: string, markupId: string, sent: number, transport: LiveTransport, log: MarkupEventLog): Promise<void> {
  let position = sent;
  for (;;) {
    const page = await log.eventsAfter(markupId, position, CATCH_UP_PAGE);
    if (page.events.length === 0) return;
    for (const { seq, event } of page.events) {
      const outcome = await transport.deliver(connectionId, markupId, seq, eventMessageText(markupId, seq, await eventBody(event)));
      if (outcome.kind === 'gone') return;
      if (outcome.kind === 'not-next') {
        // Another sender got there first: go on after what it sent, or stop if it is behind (it goes on itself).
        if (outcome.sent === undefined || outcome.sent < seq) return;
      }
      position = Math.max(position, outcome.kind === 'not-next' ? outcome.sent! : seq);
    }
    // Then one more read at least: what was logged while this page was sent.
  }
}

/**
 * The live fan-out of a batch of the table's stream (outbox inserts): each event of a markup goes
 * to that markup's subscribers, whose credentials are read again first (a dead one's connection is
 * closed instead). A subscriber that is behind (the event after a gap) is caught up from the log.
 * Like the webhook fan-out, it stops at the first record that fails and answers its SequenceNumber.
 */
export async function fanOutLive(
  event: DynamoDBStreamEvent,
  transport: LiveTransport,
  log: MarkupEventLog = markupEventLog,
): Promise<DynamoDBBatchResponse> {
  const alive = credentialChecks();
  for (const record of event.Records) {
    try {
      if (!matchesStreamFilter(record as Parameters<typeof matchesStreamFilter>[0])) continue;
      const image = record.dynamodb?.NewImage;
      if (!image) continue;
      for (const outboxEvent of eventsOfItem(unmarshall(image as Record<string, AttributeValue>)))
        await deliverEvent(outboxEvent, transport, log, alive);
    } catch (error) {
      logger.error('live fan-out failed; the batch resumes at this record', { sequenceNumber: record.dynamodb?.SequenceNumber, error });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb?.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}

async function deliverEvent(
  event: EventRecord,
  transport: LiveTransport,
  log: MarkupEventLog,
  alive: (principal: StoredPrincipal) => Promise<boolean>,
): Promise<void> {
  const seq = seqOf(event);
  const { markupId } = event;
  if (!markupId || seq === undefined) return;
  const subscriptions = await liveSubscriptionsOf(markupId);
  if (subscriptions.length === 0) return;
  // Built at the first delivery, live or webhook, like every event body (docs/webhooks.md): never
  // for a markup nobody listens to, so a record deleted before any delivery is null in the body.
  const text = eventMessageText(markupId, seq, await eventBody(event));
  // Authorized again for each credential, and a refused subscription ends: every session (what a
  // session may read is its person's membership, which an admin may take away while the credential
  // lives on), and anyone when the markup moved into another workspace.
  const authorized = new Map<string, ReturnType<typeof readRefusal>>();
  await forEachLimit(subscriptions, DELIVERY_CONCURRENCY, async (subscription) => {
    if (!(await alive(subscription.principal))) {
      await transport.close(subscription.connectionId, CLOSE.credentialGone.code, CLOSE.credentialGone.reason);
      return;
    }
    const moved = subscription.workspaceId !== undefined && event.workspaceId !== subscription.workspaceId;
    if (moved || (subscription.principal as unknown as Principal).kind === 'session') {
      const key = credentialKeyOf(subscription.principal);
      if (!authorized.has(key)) authorized.set(key, readRefusal(subscription.principal, markupId));
      const access = (await authorized.get(key))!;
      if ('refusal' in access) {
        await deleteLiveSubscription(markupId, subscription.connectionId);
        await transport.send(subscription.connectionId, messageText(access.refusal));
        return;
      }
    }
    const outcome = await transport.deliver(subscription.connectionId, markupId, seq, text);
    // Behind (an event before this one is not sent yet, and no catch-up runs for it): catch up from the log.
    if (outcome.kind === 'not-next' && outcome.sent !== undefined && outcome.sent !== SUBSCRIPTION_OPENING && outcome.sent < seq - 1) {
      await catchUp(subscription.connectionId, markupId, outcome.sent, transport, log);
    }
  });
}

/**
 * Closes the connections whose credential died (the local gateway runs it every few seconds over
 * its sockets; deployed, the fan-out checks at each delivery and `sweepLiveConnections` every
 * minute). One read per credential.
 */
export async function closeDeadConnections(
  connections: readonly { connectionId: string; principal: StoredPrincipal }[],
  transport: LiveTransport,
): Promise<void> {
  const alive = credentialChecks();
  await forEachLimit(connections, DELIVERY_CONCURRENCY, async ({ connectionId, principal }) => {
    if (!(await alive(principal))) await transport.close(connectionId, CLOSE.credentialGone.code, CLOSE.credentialGone.reason);
  });
}

/**
 * The periodic check (deployed every minute, `live-sweep`): every open connection whose credential
 * died is closed, even when no event came for it. Answers how many were closed.
 */
export async function sweepLiveConnections(transport: LiveTransport): Promise<number> {
  const alive = credentialChecks();
  let closed = 0;
  let batch: { connectionId: string; principal: StoredPrincipal }[] = [];
  const check = async () => {
    await forEachLimit(batch, DELIVERY_CONCURRENCY, async ({ connectionId, principal }) => {
      if (await alive(principal)) return;
      await transport.close(connectionId, CLOSE.credentialGone.code, CLOSE.credentialGone.reason);
      closed += 1;
    });
    batch = [];
  };
  for await (const connection of allLiveConnections()) {
    batch.push(connection);
    if (batch.length >= 100) await check();
  }
  await check();
  return closed;
}
