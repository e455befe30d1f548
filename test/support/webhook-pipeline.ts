import { afterEach, expect } from 'vitest';
import { listEvents, type EventRecord } from '../../shared/db/events.js';
import type { WebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { makeOrganization, type Org } from './api.js';
import { eventually } from './polling.js';
import { startWebhookReceiver, verifyWithStandardWebhooks, type ReceivedRequest, type WebhookReceiver } from './webhook-receiver.js';
import { createWebhookRegistration } from './webhooks.js';

/** DESIGN "Webhook deliveries": the first attempt leaves within 10 s of the event. */
export const FIRST_ATTEMPT_MS = 10_000;

/** A loopback receiver with the registration (created through the API) that points at it. */
export interface Subscriber {
  receiver: WebhookReceiver;
  registration: WebhookRegistration;
}

/** Closes every receiver `subscribe` opened once each test ends; call once at a test file's top level. */
export function closeReceiversAfterEach(): void {
  afterEach(async () => {
    await Promise.all(openReceivers.splice(0).map((receiver) => receiver.close()));
  });
}
const openReceivers: WebhookReceiver[] = [];

/** Registers a fresh loopback receiver on the workspace of `key` (every type unless `body` says otherwise). */
export async function subscribe(key: string, body: Record<string, unknown> = {}): Promise<Subscriber> {
  const receiver = await startWebhookReceiver();
  openReceivers.push(receiver);
  const registration = await createWebhookRegistration(key, { url: receiver.url, ...body });
  return { receiver, registration };
}

/** A fresh organization and, apart from it, the subscriber on its workspace (`body` as for `subscribe`). */
export async function organizationWithSubscriber(body: Record<string, unknown> = {}): Promise<{ org: Org } & Subscriber> {
  const org = await makeOrganization();
  return { org, ...(await subscribe(org.workspaceKey, body)) };
}

/** A fresh organization with one subscriber to every event type. */
export async function subscribedOrganization(body: Record<string, unknown> = {}): Promise<Org & Subscriber> {
  const org = await makeOrganization();
  return { ...org, ...(await subscribe(org.workspaceKey, body)) };
}

/** The parsed body of a request; the receiver keeps raw bytes so signatures can be checked on them. */
const bodyOf = (request: ReceivedRequest): any => JSON.parse(request.body);
export const webhookIdOf = (request: ReceivedRequest): string => String(request.headers['webhook-id']);

/** Polls the receiver until `count` requests matched `match` or `timeoutMs` passed; answers the matching ones. */
export async function arrivals(
  receiver: WebhookReceiver,
  match: (body: any) => boolean,
  count = 1,
  timeoutMs = FIRST_ATTEMPT_MS,
): Promise<ReceivedRequest[]> {
  const matching = () => receiver.requests.filter((request) => match(bodyOf(request)));
  return eventually(
    async () => matching(),
    (found) => found.length >= count,
    timeoutMs,
  );
}

/** Polls the outbox of `workspaceId` until an event matches; throws naming what there was instead. */
export async function outboxEvent(workspaceId: string, match: (event: EventRecord) => boolean, timeoutMs = 30_000): Promise<EventRecord> {
  const events = await eventually(
    () => listEvents(workspaceId),
    (found) => found.some(match),
    timeoutMs,
  );
  const event = events.find(match);
  if (!event) throw new Error(`no such event among ${JSON.stringify(events.map((found) => found.type))}`);
  return event;
}

/** The field the spec's markup type table gives each type: what a listener reads without a follow-up call. */
const TYPE_FIELD: Record<string, string> = { image: 'images', webpage: 'url', video: 'isReady', pdf: 'isReady' };

export interface ExpectedDelivery {
  type: string;
  markupId: string;
  userId: string;
  commentId?: string;
  messageId?: string;
}

/**
 * Waits for the outbox event of `expected` (the operation caused it), then for its delivery to
 * `subscriber` within 10 s of the event, and checks the delivery: signed (standardwebhooks),
 * webhook-id == body id == the outbox event id, and the envelope's type, workspace, markup (with
 * images), actor, comment and message. Answers the request and the event.
 */
export async function expectDelivered(
  org: Pick<Org, 'workspaceId'>,
  subscriber: Subscriber,
  expected: ExpectedDelivery,
  operationMs = 30_000,
) {
  const sameThing = (event: EventRecord) =>
    event.type === expected.type &&
    event.markupId === expected.markupId &&
    (expected.messageId === undefined || event.messageId === expected.messageId) &&
    (expected.commentId === undefined || event.threadId === expected.commentId);
  const event = await outboxEvent(org.workspaceId, sameThing, operationMs);
  const [request] = await arrivals(
    subscriber.receiver,
    (body) => body.id === event.id,
    1,
    Math.max(0, Date.parse(event.createdAt) + FIRST_ATTEMPT_MS - Date.now()) + 500,
  );
  expect(request, `no delivery of ${event.type} ${event.id} within 10 s of the event`).toBeDefined();
  expect(request!.at - Date.parse(event.createdAt)).toBeLessThan(FIRST_ATTEMPT_MS);
  const body = verifyWithStandardWebhooks(subscriber.registration.signingKey, request!) as any;
  expect(webhookIdOf(request!)).toBe(event.id);
  expect(body).toMatchObject({ id: event.id, type: expected.type, workspaceId: org.workspaceId });
  expect(body.data.markup).toMatchObject({ id: expected.markupId });
  // Spec "Markups": `images` is a field of image markups only (a webpage markup has `url` instead).
  expect(body.data.markup).toHaveProperty(TYPE_FIELD[body.data.markup.type as string] ?? 'images');
  expect(body.data.user).toMatchObject({ id: expected.userId });
  if (expected.commentId) expect(body.data.comment).toMatchObject({ id: expected.commentId });
  else expect(body.data.comment ?? null).toBeNull();
  if (expected.messageId) expect(body.data.message).toMatchObject({ id: expected.messageId });
  else expect(body.data.message ?? null).toBeNull();
  return { request: request!, event, body };
}
