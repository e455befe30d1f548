import type { RouteGroup } from '../shared/http/openapi.js';
import type { AnyRoute } from '../shared/http/route.js';
import type { ShippedFile } from '../shared/http/shipped-file.js';
import { OUTBOX_STREAM_FILTER } from '../shared/events/outbox-stream.js';
import type { QueueName } from '../shared/queues.js';
import { authRoutes } from './auth/routes.js';
import { installationsRoutes } from './installations/routes.js';
import { itemsRoutes } from './items/routes.js';
import { liveRoutes } from './live/routes.js';
import { LIVE_SOCKET_ROUTES, type LiveSocketRoute } from './live-socket/routes.js';
import { markupsRoutes } from './markups/routes.js';
import { messagesRoutes } from './messages/routes.js';
import { OPENAPI_FILES } from './openapi/files.js';
import { openApiRoutes } from './openapi/routes.js';
import { threadsRoutes } from './threads/routes.js';
import { uploadsRoutes } from './uploads/routes.js';
import { usersRoutes } from './users/routes.js';
import { webhooksRoutes } from './webhooks/routes.js';
import { workspaceRoutes } from './workspaces/routes.js';

/** What a function may touch; the CDK stacks grant exactly this and nothing more. */
export interface FunctionAccess {
  table?: 'read' | 'readWrite';
  bucket?: 'read' | 'readWrite';
  /** Queues the function sends messages to. */
  sendsTo?: QueueName[];
  /** Dead-letter queues the function sends to (a delivery that failed its last attempt). */
  sendsToDeadLetters?: QueueName[];
  /** Hold queues the function sends to (a dead-letter consumer keeping what it handled for a redrive; QueueDefinition.deadLetterHold). */
  sendsToDeadLetterHold?: QueueName[];
  /**
   * Signs exchange tokens (`kms:Sign` on the exchange-token key): the auth group, which mints them,
   * and nothing else. Verifying is implied for every function with a credentialed route, which gets
   * the public key only (`kms:GetPublicKey`), so no verifier can mint.
   */
  exchangeKeys?: true;
  /** Sends email through SES from the configured sender (CDK context `emailSender`), and only from it. */
  sendsEmail?: true;
  /**
   * Updates many item records a batch through PartiQL (`applyItemChanges`: carrying or rebasing a
   * folder tree), `dynamodb:PartiQLUpdate`, which `table: 'readWrite'` does not include: the items
   * function and the move worker, and nothing else.
   */
  partiqlUpdates?: true;
  /**
   * Posts to and closes the live-update WebSocket API's connections (`execute-api:ManageConnections`
   * on that one API, and LIVE_MANAGEMENT_URL): its socket routes and the live fan-out, nothing else.
   */
  liveConnections?: true;
  /** Hands out the live-update socket's URL (LIVE_URL): the function of `POST /live/tickets`. */
  liveUrl?: true;
}

interface FunctionBase {
  /** Folder under `functions/`; also the construct id stem. */
  name: string;
  access: FunctionAccess;
  memoryMb?: number;
  timeoutSeconds?: number;
  /** @default 'arm64' */
  architecture?: 'arm64' | 'x86_64';
  /** Ships the packed Chromium build of @sparticuz/chromium as a layer (x86-64 only). */
  chromium?: boolean;
  /**
   * Ships sharp, PDFium, ag-psd and ffmpeg (and, with context `epsConverter`, Ghostscript) as a layer (x86-64: the native builds npm
   * installed and our static ffmpeg).
   */
  converters?: boolean;
  /** /tmp size; the conversion worker holds a source of up to 5 GiB and its outputs. */
  ephemeralStorageMb?: number;
  /**
   * Files copied next to the bundle and read at run time (`readShippedFile`), not imported: large assets stay out of the bundle and its
   * cold import.
   */
  files?: readonly ShippedFile[];
}

export interface ApiFunction extends FunctionBase {
  kind: 'api';
  routes: readonly AnyRoute[];
  /** What the group's routes are about: the description of its tag in the OpenAPI document (the tag is `name`). */
  description: string;
  /** Receives the HTTP API's `$default` route (unknown paths and methods). */
  isDefault?: boolean;
  /** Receives every `OPTIONS` request (`OPTIONS /{proxy+}`): the CORS preflights of embedded clients. */
  answersPreflight?: true;
}

export interface QueueWorkerFunction extends FunctionBase {
  kind: 'sqs';
  queue: QueueName;
  /** Fed by the queue's dead-letter queue instead of the queue itself; needs `timeoutSeconds`. */
  deadLetters?: boolean;
}

/**
 * A consumer of the table's DynamoDB Stream (NEW_IMAGE), fed the records `filter` matches (Lambda
 * FilterCriteria deployed, the local stream pump locally: one pattern for both).
 */
export interface StreamConsumerFunction extends FunctionBase {
  kind: 'stream';
  filter: typeof OUTBOX_STREAM_FILTER;
}

/**
 * A function run on a schedule (an EventBridge rule deployed, with retries and a dead-letter queue;
 * a timer in the local stack, which also runs it once at start).
 */
export interface ScheduledFunction extends FunctionBase {
  kind: 'schedule';
  everyMinutes: number;
}

/**
 * The function behind an API Gateway WebSocket API (live updates): one Lambda for its route group,
 * as the HTTP API's groups are; the local gateway runs it on its own port's `/api/v2/live`.
 */
export interface WebSocketFunction extends FunctionBase {
  kind: 'websocket';
  routes: readonly LiveSocketRoute[];
}

export type FunctionDefinition = ApiFunction | QueueWorkerFunction | StreamConsumerFunction | ScheduledFunction | WebSocketFunction;

/**
 * Every Lambda of the service, and through the `api` ones every route: the one list the CDK stacks,
 * the local stack and the OpenAPI document are built from. Only the openapi function imports it at
 * run time; every other entry imports its own group's `routes.ts`, so its bundle holds only that group.
 */
export const FUNCTIONS: readonly FunctionDefinition[] = [
  // Archiving originals queues their objects for deletion on the conversion queue.
  {
    kind: 'api',
    name: 'workspaces',
    description: 'Workspaces of an organization, their settings, storage and markup allowance.',
    routes: workspaceRoutes,
    access: { table: 'readWrite', sendsTo: ['conversion'] },
  },
  {
    kind: 'api',
    name: 'items',
    description: 'Folders and the items in them (folders and markups): listing, moving, archiving and restoring.',
    routes: itemsRoutes,
    // Deleting or moving a large folder tree may take longer than a single small request.
    timeoutSeconds: 29,
    // A folder moved into another workspace queues its move job (and a stalled one again).
    // Folder listings and item reads show markup cards, whose file and thumbnail links are presigned.
    access: { table: 'readWrite', bucket: 'read', partiqlUpdates: true, sendsTo: ['conversion', 'moves'] },
  },
  {
    kind: 'api',
    name: 'markups',
    description: 'Review boards made from a webpage, images, a PDF or a video: creating, reading, listing and changing them.',
    routes: markupsRoutes,
    timeoutSeconds: 29,
    // POST /markups/file stores the file; file markups queue their conversion.
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['thumbnails', 'conversion'] },
  },
  // Signs upload policies (its role's credentials sign them), checks landed objects and retags them.
  {
    kind: 'api',
    name: 'uploads',
    description: 'Presigned-POST upload policies and the confirmation of uploaded files.',
    routes: uploadsRoutes,
    access: { table: 'readWrite', bucket: 'readWrite' },
  },
  // Attachment links are presigned GETs; deleting comments queues their objects for deletion. Attaching a screenshot confirms
  // its upload (HEADs and retags the object) and signs screenshot upload policies; the thumbnail job goes to the conversion queue.
  // A webpage thread queues the location of its element on the page screenshot (locate-page-elements, thumbnails queue).
  {
    kind: 'api',
    name: 'threads',
    description: 'Comment threads pinned on a markup: creating, listing, resolving, moving pins, screenshots, read state.',
    routes: threadsRoutes,
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['conversion', 'thumbnails'] },
  },
  {
    kind: 'api',
    name: 'messages',
    description: 'Messages of a thread: replies, edits, attachments, read state.',
    routes: messagesRoutes,
    access: { table: 'readWrite', bucket: 'read', sendsTo: ['conversion'] },
  },
  // Verifies customer JWTs against installations, upserts their external users and mints exchange tokens;
  // emails sign-in links to members (SES) and mints their session tokens with the same key.
  {
    kind: 'api',
    name: 'auth',
    description:
      "Sign-in to the review app by email link and session tokens; embedded commenting: the installation's JWT settings and the exchange of customer JWTs and identity-provider tokens for exchange tokens.",
    routes: authRoutes,
    access: { table: 'readWrite', exchangeKeys: true, sendsEmail: true },
  },
  // An installation created with `url` makes a webpage markup, whose thumbnail job goes to the thumbnails queue.
  {
    kind: 'api',
    name: 'installations',
    description: 'Installations of the embedded commenting client: their public keys and allowed origins.',
    routes: installationsRoutes,
    access: { table: 'readWrite', sendsTo: ['thumbnails'] },
  },
  // External users (their records and the User records their threads are authored by) and members; invitations send emails through SES.
  {
    kind: 'api',
    name: 'users',
    description: 'Workspace members, invitations and roles, and external users (the end users of embedded commenting).',
    routes: usersRoutes,
    access: { table: 'readWrite', sendsEmail: true },
  },
  {
    kind: 'api',
    name: 'webhooks',
    description: 'Webhook registrations, their signing keys and delivery logs.',
    routes: webhooksRoutes,
    access: { table: 'readWrite', sendsTo: ['webhookDelivery'] },
  },
  // Reads the OpenAPI document and the API reference's script from files beside its bundle.
  {
    kind: 'api',
    name: 'openapi',
    description: 'This OpenAPI document (and, not described here, the API reference page at GET /api/v2/docs).',
    routes: openApiRoutes,
    files: OPENAPI_FILES,
    isDefault: true,
    access: {},
  },
  // Issues live-update tickets (one item each, with a TTL) for any credential, with the socket's URL.
  {
    kind: 'api',
    name: 'live',
    description: "Live updates: tickets for the WebSocket that pushes each markup's events as they happen.",
    routes: liveRoutes,
    access: { table: 'readWrite', liveUrl: true },
  },
  // Answers CORS preflights from the origin index (read only); it has no route of its own.
  {
    kind: 'api',
    name: 'cors',
    description: 'CORS preflights of embedded clients.',
    routes: [],
    answersPreflight: true,
    access: { table: 'read' },
  },
  // The upload prefix's S3 ObjectCreated notifications, which S3 sends to the uploads queue.
  { kind: 'sqs', name: 'upload-confirmed', queue: 'uploads', access: { table: 'readWrite', bucket: 'read' } },
  {
    kind: 'sqs',
    name: 'conversion',
    queue: 'conversion',
    // About 2.3 vCPU; a 10 s 1080p video re-encodes in ~4.5 s on 2 cores here.
    memoryMb: 4096,
    architecture: 'x86_64',
    converters: true,
    ephemeralStorageMb: 10240,
    // Archive jobs queue their next batch, and deletions (of archived originals, of a deleted workspace's
    // content) their objects, on the conversion queue.
    // Events (markup_ready) go out through the table's stream, never straight to the webhook queue.
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['conversion'] },
  },
  {
    kind: 'sqs',
    name: 'conversion-dead-letters',
    queue: 'conversion',
    // A job that died on every delivery (a killed worker too) leaves its markup failed, not pending;
    // the dead letter then waits in the hold queue for a redrive.
    deadLetters: true,
    timeoutSeconds: 30,
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['conversion'], sendsToDeadLetterHold: ['conversion'] },
  },
  {
    kind: 'sqs',
    name: 'thumbnail-renderer',
    queue: 'thumbnails',
    memoryMb: 2048,
    architecture: 'x86_64',
    chromium: true,
    // The thumbnail job queues each view mode's full-page screenshot on its own queue.
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['thumbnails'] },
  },
  // Logs attempts and disables registrations (410, 5 days failing); puts retries back on its queue
  // and a delivery that failed its last attempt on the dead-letter queue.
  {
    kind: 'sqs',
    name: 'webhook-delivery',
    queue: 'webhookDelivery',
    // Event bodies carry the markup with its files' presigned links.
    access: { table: 'readWrite', bucket: 'read', sendsTo: ['webhookDelivery'], sendsToDeadLetters: ['webhookDelivery'] },
  },
  // Carries a folder moved into another workspace along in bounded batches, queueing its own next batch.
  { kind: 'sqs', name: 'item-moves', queue: 'moves', access: { table: 'readWrite', partiqlUpdates: true, sendsTo: ['moves'] } },
  // Queues again the conversion, thumbnail or folder-move job whose job was lost between its commit and its enqueue.
  {
    kind: 'schedule',
    name: 'pending-work-sweep',
    everyMinutes: 5,
    timeoutSeconds: 60,
    access: { table: 'readWrite', sendsTo: ['conversion', 'thumbnails', 'moves'] },
  },
  // New outbox items -> one delivery job per (event, enabled and subscribed registration).
  {
    kind: 'stream',
    name: 'webhook-fanout',
    filter: OUTBOX_STREAM_FILTER,
    timeoutSeconds: 30,
    access: { table: 'read', sendsTo: ['webhookDelivery'] },
  },
  // The live-update socket: takes tickets ($connect), records connections and subscriptions, authorizes and catches up subscribes
  // ($default).
  {
    kind: 'websocket',
    name: 'live-socket',
    routes: LIVE_SOCKET_ROUTES,
    timeoutSeconds: 29,
    // Catch-up sends event bodies, whose markups carry their files' presigned links.
    access: { table: 'readWrite', bucket: 'read', liveConnections: true },
  },
  // New outbox items -> each event to its markup's live subscribers, on its own event source mapping so a slow webhook never delays it.
  // Writes: each subscription's last seq sent (the claim that keeps catch-up and fan-out from sending twice), the event's stored body, gone
  // connections.
  {
    kind: 'stream',
    name: 'live-fanout',
    filter: OUTBOX_STREAM_FILTER,
    timeoutSeconds: 30,
    // Event bodies, as webhook deliveries send them: markups with their files' presigned links.
    access: { table: 'readWrite', bucket: 'read', liveConnections: true },
  },
  // Closes the live connections whose credential died (revoked key, signed-out session, deleted installation or end user) though no event
  // came for them.
  { kind: 'schedule', name: 'live-sweep', everyMinutes: 1, timeoutSeconds: 60, access: { table: 'readWrite', liveConnections: true } },
];

/** Path of a function's entry file, relative to the repository root. */
export const entryOf = (definition: Pick<FunctionDefinition, 'name'>) => `functions/${definition.name}/handler.ts`;

/** Narrows a registry entry to an api function (one with routes). */
export const isApiFunction = (definition: FunctionDefinition): definition is ApiFunction => definition.kind === 'api';

/** Every route of the service, in registry order. */
export function allRoutes(): AnyRoute[] {
  return FUNCTIONS.filter(isApiFunction).flatMap((definition) => definition.routes);
}

/** The api functions with their routes, as the OpenAPI document tags them (one tag per function). */
export function routeGroups(): RouteGroup[] {
  return FUNCTIONS.filter(isApiFunction).map(({ name, description, routes }) => ({ name, description, routes }));
}

/** The route table of the api function with this name. */
export function routesOf(name: string): readonly AnyRoute[] {
  const found = FUNCTIONS.filter(isApiFunction).find((definition) => definition.name === name);
  if (!found) throw new Error(`No api function named ${name} in the registry.`);
  return found.routes;
}
