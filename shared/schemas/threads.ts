import * as v from 'valibot';
import { Id, sizedJson, storableJsonObject } from './builders.js';

/**
 * The public shapes of threads, messages and screenshots (Resources: Thread, Message, Screenshot):
 * the OpenAPI document describes the answers by these schemas, and the domain's views are typed by
 * them (`ThreadView`, `MessageView`...), so a view that drifts from its schema fails to compile.
 */

/** Longest text of a message (`content`, or one text insert of a Delta). */
export const MAX_TEXT = 20_000;

/** Levels an embed or an attributes object may nest (itself level 1); Quill's own embeds use two or three. */
export const MAX_DELTA_VALUE_DEPTH = 10;
/**
 * Largest Delta, as UTF-8 JSON. A message item stores the Delta and its plain text, which is at most
 * as long, so two of them stay well inside DynamoDB's 400 KB item.
 */
export const MAX_DELTA_BYTES = 100_000;

const DeltaValue = storableJsonObject(MAX_DELTA_VALUE_DEPTH);

/** A Quill Delta: `{ ops: [{ insert, attributes? }] }`, where `insert` is text or an embed (such as `{ mention: { id, name } }`). */
export const DeltaSchema = sizedJson(
  v.object({
    ops: v.pipe(
      v.array(
        v.object({
          insert: v.union([v.pipe(v.string(), v.maxLength(MAX_TEXT)), DeltaValue], 'must be text or an embed object'),
          attributes: v.optional(DeltaValue),
        }),
      ),
      v.maxLength(2000, 'must have at most 2000 operations'),
    ),
  }),
  MAX_DELTA_BYTES,
);

/** PATCH /threads/{id}/move-pin answers the thread record, whose fields depend on the pin's type. */
export const ThreadRecordSchema = v.record(v.string(), v.unknown());

export const ResolvedSchema = v.object({ threadId: Id, modifiedAt: v.number() });

export const UnresolvedSchema = v.object({ threadId: Id });

const Author = v.object({ id: v.string(), createdAt: v.number(), modifiedAt: v.number(), name: v.string(), guest: v.boolean() });

export const MessageSchema = v.object({
  id: Id,
  createdAt: v.number(),
  modifiedAt: v.number(),
  scopes: v.array(v.string()),
  assignedRoleSlugs: v.array(v.string()),
  threadId: Id,
  message: v.string(),
  messageJson: DeltaSchema,
  user: Author,
  userMetaData: v.object({ lastSeenAt: v.number() }),
  attachments: v.array(
    v.object({
      id: v.string(),
      createdAt: v.number(),
      modifiedAt: v.number(),
      messageId: v.string(),
      url: v.string(),
      etag: v.string(),
      mimeType: v.string(),
      originalFilename: v.string(),
      filesize: v.number(),
    }),
  ),
  clipVideos: v.array(
    v.object({ id: v.string(), createdAt: v.number(), modifiedAt: v.number(), messageId: v.string(), title: v.string(), sharedUrl: v.string(), width: v.number(), height: v.number() }),
  ),
  content: v.string(),
  mentionIds: v.array(v.string()),
  read: v.boolean(),
});

const Timestamps = { id: v.string(), createdAt: v.number(), modifiedAt: v.number() };

/** The public Thread; the fields after `unreadMessageCount` depend on the markup's type. */
export const ThreadSchema = v.object({
  ...Timestamps,
  scopes: v.array(v.string()),
  assignedRoleSlugs: v.array(v.string()),
  user: Author,
  number: v.number(),
  resolved: v.boolean(),
  priority: v.nullable(v.number()),
  messages: v.array(MessageSchema),
  userMetaData: v.object({ lastSeenAt: v.number() }),
  lastActivityAt: v.number(),
  annotations: v.nullable(v.record(v.string(), v.unknown())),
  read: v.boolean(),
  unreadMessageCount: v.number(),
  hasScreenshot: v.boolean(),
  projectId: v.string(),
  proxyUrl: v.optional(v.string()),
  originalUrl: v.optional(v.string()),
  canonicalUrl: v.optional(v.string()),
  elements: v.optional(v.array(v.object({ ...Timestamps, threadId: v.string(), path: v.string(), offsetXPercentage: v.number(), offsetYPercentage: v.number() }))),
  parents: v.optional(
    v.array(v.object({ ...Timestamps, path: v.string(), depth: v.number(), proxyUrl: v.string(), originalUrl: v.string(), canonicalUrl: v.string() })),
  ),
  browserContext: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  viewModeId: v.optional(v.nullable(v.string())),
  anchor: v.optional(
    v.nullable(
      v.object({
        css: v.string(),
        textQuote: v.optional(v.object({ exact: v.string(), prefix: v.optional(v.string()), suffix: v.optional(v.string()) })),
        textPosition: v.optional(v.object({ start: v.number(), end: v.number() })),
      }),
    ),
  ),
  projectImageId: v.optional(v.nullable(v.string())),
  offsetXPercentage: v.optional(v.number()),
  offsetYPercentage: v.optional(v.number()),
  startTime: v.optional(v.number()),
  endTime: v.optional(v.number()),
  pageNumber: v.optional(v.nullable(v.number())),
  textHighlight: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
});

export const ThreadPageSchema = v.object({
  threads: v.array(ThreadSchema),
  query: v.object({ resolved: v.nullable(v.boolean()) }),
  offset: v.number(),
  total: v.number(),
  cursorId: v.nullable(v.string()),
});

export const SCREENSHOT_TYPES = ['extension', 'native', 'static'] as const;

/** The spec's Screenshot, plus presigned links (`url`, and `thumbnailUrl` once made) and `processingError` when no thumbnail could be made. */
export const ScreenshotSchema = v.object({
  id: v.string(),
  createdAt: v.number(),
  modifiedAt: v.number(),
  mimeType: v.string(),
  width: v.number(),
  height: v.number(),
  filesize: v.number(),
  type: v.picklist(SCREENSHOT_TYPES),
  isProcessing: v.boolean(),
  url: v.string(),
  thumbnailUrl: v.optional(v.string()),
  processingError: v.optional(v.string()),
});

export const ScreenshotPolicySchema = v.object({
  key: v.string(),
  policy: v.object({ url: v.string(), fields: v.record(v.string(), v.string()) }),
  bucket: v.string(),
  metadata: v.record(v.string(), v.union([v.string(), v.number()])),
});
