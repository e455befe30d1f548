import type { AnyRoute } from '../shared/http/route.js';
import type { QueueName } from '../shared/queues.js';
import { openApiRoutes } from './openapi/routes.js';
import { ROUTE_GROUPS } from './route-tables.js';

/** What a function may touch; the CDK stacks grant exactly this and nothing more. */
export interface FunctionAccess {
  table?: 'read' | 'readWrite';
  bucket?: 'read' | 'readWrite';
  /** Queues the function sends messages to. */
  sendsTo?: QueueName[];
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
  /** Ships sharp, mupdf, Ghostscript (WASM) and ffmpeg as a layer (x86-64: the native builds npm installed). */
  converters?: boolean;
  /** /tmp size; the conversion worker holds a source of up to 5 GiB and its outputs. */
  ephemeralStorageMb?: number;
}

export interface ApiFunction extends FunctionBase {
  kind: 'api';
  routes: readonly AnyRoute[];
  /** Receives the HTTP API's `$default` route (unknown paths and methods). */
  isDefault?: boolean;
}

export interface UploadNotificationFunction extends FunctionBase {
  kind: 's3';
}

export interface QueueWorkerFunction extends FunctionBase {
  kind: 'sqs';
  queue: QueueName;
}

export type FunctionDefinition = ApiFunction | UploadNotificationFunction | QueueWorkerFunction;

/** Every Lambda of the service. The CDK stacks and the local stack are both built from this list. */
export const FUNCTIONS: readonly FunctionDefinition[] = [
  // Archiving originals queues their objects for deletion on the conversion queue.
  { kind: 'api', name: 'workspaces', routes: ROUTE_GROUPS.workspaces, access: { table: 'readWrite', sendsTo: ['conversion'] } },
  {
    kind: 'api',
    name: 'items',
    routes: ROUTE_GROUPS.items,
    // Deleting or moving a large folder tree may take longer than a single small request.
    timeoutSeconds: 29,
    access: { table: 'readWrite', sendsTo: ['conversion'] },
  },
  {
    kind: 'api',
    name: 'markups',
    routes: ROUTE_GROUPS.markups,
    timeoutSeconds: 29,
    // POST /markups/file stores the file; file markups queue their conversion.
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['thumbnails', 'conversion'] },
  },
  // Signs upload policies (its role's credentials sign them), checks landed objects and retags them.
  { kind: 'api', name: 'uploads', routes: ROUTE_GROUPS.uploads, access: { table: 'readWrite', bucket: 'readWrite' } },
  // Attachment links are presigned GETs; deleting comments queues their objects for deletion. Attaching a screenshot confirms
  // its upload (HEADs and retags the object) and signs screenshot upload policies; the thumbnail job goes to the conversion queue.
  { kind: 'api', name: 'threads', routes: ROUTE_GROUPS.threads, access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['conversion'] } },
  { kind: 'api', name: 'messages', routes: ROUTE_GROUPS.messages, access: { table: 'readWrite', bucket: 'read', sendsTo: ['conversion'] } },
  { kind: 'api', name: 'openapi', routes: openApiRoutes, isDefault: true, access: {} },
  { kind: 's3', name: 'upload-confirmed', access: { table: 'readWrite', bucket: 'read' } },
  {
    kind: 'sqs',
    name: 'conversion',
    queue: 'conversion',
    // About 2.3 vCPU; a 10 s 1080p video re-encodes in ~4.5 s on 2 cores here.
    memoryMb: 4096,
    architecture: 'x86_64',
    converters: true,
    ephemeralStorageMb: 10240,
    access: { table: 'readWrite', bucket: 'readWrite', sendsTo: ['webhookDelivery'] },
  },
  {
    kind: 'sqs',
    name: 'thumbnail-renderer',
    queue: 'thumbnails',
    memoryMb: 2048,
    architecture: 'x86_64',
    chromium: true,
    access: { table: 'readWrite', bucket: 'readWrite' },
  },
  { kind: 'sqs', name: 'webhook-delivery', queue: 'webhookDelivery', access: { table: 'read' } },
];

/** Path of a function's entry file, relative to the repository root. */
export const entryOf = (definition: Pick<FunctionDefinition, 'name'>) => `functions/${definition.name}/handler.ts`;
