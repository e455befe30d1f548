import * as v from 'valibot';
import { Id, numberIn, sizedJson, storableJsonObject } from './builders.js';

/**
 * The public shapes of threads, messages and screenshots (Resources: Thread, Message, Screenshot):
 * the OpenAPI document describes the answers by these schemas, and the domain's views are typed by
 * them (`ThreadView`, `MessageView`...), so a view that drifts from its schema fails to compile.
 */

/** Longest text of a message (`content`, or one text insert of a Delta). */
export const MAX_TEXT = 20_000;

/** Text of at most `max` characters. */
export const Text = (max = 2048) => v.pipe(v.string(), v.maxLength(max, `must be at most ${max} characters`));
export const NonNegative = numberIn(0);
export const Dimension = numberIn(0, 100_000);

/** BrowserContextRequest: every field optional, as the live service's clients send what they know (DESIGN.md). */
export const BrowserContextRequest = v.object({
  browserName: v.optional(Text(200)),
  browserVersion: v.optional(Text(200)),
  os: v.optional(Text(200)),
  osVersion: v.optional(Text(200)),
  osVersionName: v.optional(Text(200)),
  platform: v.optional(Text(200)),
  screenWidth: v.optional(Dimension),
  screenHeight: v.optional(Dimension),
  viewportWidth: v.optional(Dimension),
  viewportHeight: v.optional(Dimension),
});

/** CanvasThreadAnnotationRequest */
export const AnnotationRequest = v.object({ version: Text(50), scale: NonNegative, originalWidth: Dimension, originalHeight: Dimension });

/** ThreadTextHighlightRequest */
export const TextHighlightRequest = v.object({
  startKey: Text(),
  endKey: Text(),
  startOffset: NonNegative,
  startIndex: NonNegative,
  endOffset: NonNegative,
  endIndex: NonNegative,
  text: Text(MAX_TEXT),
});

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

const ThreadRecordBase = { id: v.string(), userId: v.string(), projectId: v.string(), number: v.number(), resolved: v.boolean() };

/**
 * The thread record of each pin type (Resources: Thread, "Thread record returned by move-pin"), as
 * `threadRecordOf` builds it: a webpage pin, a PDF pin, an image or video pin. The OpenAPI document
 * keeps describing it as `ThreadRecordSchema` (any object); this schema types the view.
 */
export const ThreadRecordViewSchema = v.union([
  v.object({
    ...ThreadRecordBase,
    proxyHostId: v.nullable(v.string()),
    urlPath: v.nullable(v.string()),
    canonicalUrl: v.nullable(v.string()),
    viewModeId: v.nullable(v.string()),
  }),
  v.object({
    ...ThreadRecordBase,
    pageNumber: v.nullable(v.number()),
    pageRelativeX: v.optional(v.number()),
    pageRelativeY: v.optional(v.number()),
  }),
  v.object({
    ...ThreadRecordBase,
    projectImageId: v.nullable(v.string()),
    offsetXPercentage: v.optional(v.number()),
    offsetYPercentage: v.optional(v.number()),
    startTime: v.number(),
    endTime: v.number(),
  }),
]);

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
    v.object({
      id: v.string(),
      createdAt: v.number(),
      modifiedAt: v.number(),
      messageId: v.string(),
      title: v.string(),
      sharedUrl: v.string(),
      width: v.number(),
      height: v.number(),
    }),
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
  elements: v.optional(
    v.array(
      v.object({ ...Timestamps, threadId: v.string(), path: v.string(), offsetXPercentage: v.number(), offsetYPercentage: v.number() }),
    ),
  ),
  parents: v.optional(
    v.array(
      v.object({
        ...Timestamps,
        path: v.string(),
        depth: v.number(),
        proxyUrl: v.string(),
        originalUrl: v.string(),
        canonicalUrl: v.string(),
      }),
    ),
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

/**
 * The spec's Screenshot, plus presigned links (`url`, and `thumbnailUrl` once made) and `processingError` when no thumbnail could be made.
 */
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

/** A message as one caller sees it (Resources: Message): what `toPublicMessage` answers. */
export type MessageView = v.InferOutput<typeof MessageSchema>;

/** A thread with its messages as one caller sees it (Resources: Thread): what `toPublicThread` answers. */
export type ThreadView = v.InferOutput<typeof ThreadSchema>;

/** The author of a thread or message, and the actor of a webhook event. */
export type AuthorView = ThreadView['user'];

/** A page of GET /threads. */
export type ThreadPageView = v.InferOutput<typeof ThreadPageSchema>;

/** A thread's screenshot (Resources: Screenshot). */
export type ScreenshotView = v.InferOutput<typeof ScreenshotSchema>;

/** What GET /threads/{id}/screenshot-upload-policy answers. */
export type ScreenshotPolicyView = v.InferOutput<typeof ScreenshotPolicySchema>;

/** The thread record move-pin answers, by pin type. */
export type ThreadRecordView = v.InferOutput<typeof ThreadRecordViewSchema>;

// The record's schema as documented must take every thread record the view can be.
const recordDocumented: ThreadRecordView extends v.InferOutput<typeof ThreadRecordSchema> ? true : never = true;
void recordDocumented;

/** The browser a pin was placed in, as a create thread or move-pin body sends it. */
export type BrowserContextInput = v.InferOutput<typeof BrowserContextRequest>;

/** A canvas thread's annotation, as a create thread body sends it. */
export type AnnotationInput = v.InferOutput<typeof AnnotationRequest>;

/** A PDF thread's text highlight, as a create thread body sends it. */
export type TextHighlightInput = v.InferOutput<typeof TextHighlightRequest>;
