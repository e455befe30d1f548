import * as v from 'valibot';
import { MAX_ATTACHMENTS, MAX_CLIP_VIDEOS, MAX_MENTIONS } from '../../shared/domain/comments/message-content.js';
import { THREAD_ORDERS } from '../../shared/domain/comments/thread-selection.js';
import { viewModeIdsOf } from '../../shared/domain/comments/thread-selection.js';
import {
  Cursor,
  Id,
  integerIn,
  isHttpUrl,
  MAX_URL_LENGTH,
  numberIn,
  QueryBoolean,
  queryInteger,
  sizedJson,
} from '../../shared/http/schemas.js';
import { SAMPLE_UUID } from '../../shared/http/openapi-examples.js';
import {
  AnnotationRequest,
  BrowserContextRequest,
  DeltaSchema,
  Dimension,
  MAX_TEXT,
  NonNegative,
  SCREENSHOT_TYPES,
  Text,
  TextHighlightRequest,
} from '../../shared/schemas/threads.js';
import { UploadPolicyBody } from '../uploads/schemas.js';

/** The answers' schemas are the domain's views' types: they live in shared/schemas. */
export {
  AnnotationRequest,
  BrowserContextRequest,
  DeltaSchema,
  MAX_DELTA_BYTES,
  MAX_DELTA_VALUE_DEPTH,
  MessageSchema,
  ResolvedSchema,
  ScreenshotPolicySchema,
  ScreenshotSchema,
  ThreadPageSchema,
  ThreadRecordSchema,
  TextHighlightRequest,
  ThreadSchema,
  UnresolvedSchema,
} from '../../shared/schemas/threads.js';

/** Threads per page when `limit` is not given, and the most one page holds. */
export const DEFAULT_THREAD_PAGE = 50;
export const MAX_THREAD_PAGE = 500;

export const ThreadIdParams = v.object({ id: Id });

const Percentage = numberIn(0, 100);

/** MessageRequestAttachment: a confirmed `message_attachment` upload of the markup, by its `fileId`. */
export const AttachmentRequest = v.object({ fileId: Id });

/**
 * ClipVideoRequest: a recorded clip, linked by its shared address. Clients show the address as a
 * link, so only web addresses (`isHttpUrl`); its messages are its own (not HttpUrl's): an
 * unparsable address and another scheme are told apart.
 */
export const ClipVideoRequest = v.object({
  title: Text(500),
  sharedUrl: v.pipe(
    v.string(),
    v.url('must be an absolute URL'),
    v.check(isHttpUrl, 'must be an http or https address'),
    v.maxLength(MAX_URL_LENGTH),
  ),
  width: Dimension,
  height: Dimension,
});

/** The reference's example of a message body: plain text only, since `content` and `message` are two forms of one message. */
export const MESSAGE_EXAMPLE = { content: 'Fixed in the new upload: please check again.' };

export const MessageBodyEntries = {
  content: v.optional(Text(MAX_TEXT)),
  mentionIds: v.optional(v.pipe(v.array(Id), v.maxLength(MAX_MENTIONS, `must name at most ${MAX_MENTIONS} users`))),
  message: v.optional(DeltaSchema),
  attachments: v.optional(
    v.pipe(v.array(AttachmentRequest), v.maxLength(MAX_ATTACHMENTS, `must have at most ${MAX_ATTACHMENTS} attachments`)),
  ),
  clipVideos: v.optional(
    v.pipe(v.array(ClipVideoRequest), v.maxLength(MAX_CLIP_VIDEOS, `must have at most ${MAX_CLIP_VIDEOS} clip videos`)),
  ),
};

export const Priority = integerIn(0, 1000);

/**
 * Largest `elements` and `elementParents` lists, each as UTF-8 JSON: every entry is bounded, but 100
 * parents at their longest are 800 KB, and the thread item holds both lists (DynamoDB: 400 KB).
 */
export const MAX_PIN_LIST_BYTES = 100_000;

/** CreateThreadRequestElement */
export const ElementRequest = v.object({ elementPath: Text(4096), offsetXPercentage: Percentage, offsetYPercentage: Percentage });

/** ThreadElementParentRequest */
export const ElementParentRequest = v.object({ url: Text(), canonicalUrl: Text(), path: Text(4096), depth: integerIn(0, 10_000) });

/**
 * The extension field `anchor` of a webpage thread (DESIGN.md "Embeddable client"): W3C Web
 * Annotation selectors of the pinned element, which the embeddable client tries in order to find
 * the element again after the page changed: a CSS selector, the element's text with some text
 * before and after it (TextQuoteSelector), and where that text starts and ends in the page's text
 * (TextPositionSelector).
 */
export const AnchorRequest = v.pipe(
  v.object({
    css: Text(4096),
    textQuote: v.optional(v.object({ exact: Text(2048), prefix: v.optional(Text(256)), suffix: v.optional(Text(256)) })),
    textPosition: v.optional(
      v.pipe(
        v.object({ start: integerIn(0, 100_000_000), end: integerIn(0, 100_000_000) }),
        v.check(({ start, end }) => end >= start, 'end must not be before start'),
      ),
    ),
  }),
  v.description(
    'Extension: W3C Web Annotation selectors of the pinned element (webpage threads only), returned on every read of the thread.',
  ),
);

const PinElements = sizedJson(v.pipe(v.array(ElementRequest), v.maxLength(50)), MAX_PIN_LIST_BYTES);
const PinParents = sizedJson(v.pipe(v.array(ElementParentRequest), v.maxLength(100)), MAX_PIN_LIST_BYTES);

/** A field the spec lists as required that only a webpage markup's threads need (DESIGN.md: image, PDF and video threads). */
const webpageOnly = <S extends v.GenericSchema>(schema: S, what: string) =>
  v.optional(
    v.pipe(schema, v.description(`${what} Required on a webpage markup; image, PDF and video threads leave it out (ignored when sent).`)),
  );

/**
 * The create thread body of the spec, field for field, except where DESIGN.md relaxes it: the
 * webpage fields are checked against the markup's type once it is loaded (`pinOf`), and the first
 * message is `message` (a Delta) or `content` (plain text), exactly one of them (`createThread`).
 */
export const CreateThreadBody = v.pipe(
  v.object({
    isImageThread: v.boolean(),
    projectId: v.optional(Id),
    projectImageId: v.optional(Id),
    url: webpageOnly(Text(), 'The address of the page the pin is on.'),
    canonicalUrl: webpageOnly(Text(), "The page's canonical address."),
    elements: webpageOnly(PinElements, 'The page elements the pin is on.'),
    offsetXPercentage: Percentage,
    offsetYPercentage: Percentage,
    startTime: v.optional(NonNegative),
    endTime: v.optional(NonNegative),
    message: v.optional(v.pipe(DeltaSchema, v.description('The first message as a Delta. Send this or `content`, not both.'))),
    content: v.optional(
      v.pipe(Text(MAX_TEXT), v.description('The first message as plain text, as for replies. Send this or `message`, not both.')),
    ),
    browserContext: webpageOnly(BrowserContextRequest, 'The browser the pin was placed in.'),
    elementParents: webpageOnly(PinParents, 'The parents of the pinned elements.'),
    viewModeId: webpageOnly(Text(100), 'One of the view modes of GET /markups/:id/view-modes.'),
    anchor: v.optional(AnchorRequest),
    attachments: MessageBodyEntries.attachments,
    clipVideos: MessageBodyEntries.clipVideos,
    width: v.optional(Dimension),
    height: v.optional(Dimension),
    annotations: v.optional(AnnotationRequest),
    textHighlight: v.optional(TextHighlightRequest),
    pageNumber: v.optional(integerIn(1)),
    requireDimensionsOverride: v.optional(v.boolean()),
    priority: v.optional(Priority),
  }),
  // The reference's example: a pin on an image markup with its first message as plain text (one form, not both).
  v.examples([
    {
      isImageThread: true,
      projectId: SAMPLE_UUID,
      offsetXPercentage: 42.5,
      offsetYPercentage: 18,
      content: 'The logo is blurry on this image.',
    },
  ]),
);

export const MovePinBody = v.object({
  url: v.optional(Text()),
  canonicalUrl: v.optional(Text()),
  elements: v.optional(PinElements),
  browserContext: v.optional(BrowserContextRequest),
  elementParents: v.optional(PinParents),
  anchor: v.optional(AnchorRequest),
  viewportXPercentage: v.optional(Percentage),
  viewportYPercentage: v.optional(Percentage),
});

export const ThreadOrderSchema = v.picklist(THREAD_ORDERS, `must be one of ${THREAD_ORDERS.join(', ')}`);

/** `viewMode`: a ViewModeCategory (`desktop`, `tablet`, `mobile`) or a view mode id. */
export const ViewModeFilter = v.pipe(
  v.string(),
  v.check(
    (value) => viewModeIdsOf(value) !== undefined,
    'must be desktop, tablet, mobile or a view mode id of GET /markups/:id/view-modes',
  ),
);

export const ListThreadsQuery = v.object({
  markupId: Id,
  cursorId: v.optional(Cursor),
  limit: v.optional(queryInteger(1, MAX_THREAD_PAGE)),
  offset: v.optional(queryInteger(0, 1_000_000)),
  withThreadOrMessageId: v.optional(Id),
  resolved: v.optional(QueryBoolean),
  order: v.optional(ThreadOrderSchema),
  viewMode: v.optional(ViewModeFilter),
  q: v.optional(v.pipe(v.string(), v.maxLength(500, 'must be at most 500 characters'))),
});

/** GET /threads/:id/screenshot-upload-policy: the file's name, type and size as for /uploads/upload-policy, and optionally its id. */
export const ScreenshotPolicyQuery = v.object({
  fileId: v.optional(Id),
  filename: UploadPolicyBody.entries.filename,
  mimeType: UploadPolicyBody.entries.contentType,
  filesize: queryInteger(1, Number.MAX_SAFE_INTEGER),
});

const PixelSize = integerIn(1, 100_000);

/** PUT /threads/:id/screenshot: the posted file as its policy described it, its pixel size, and what took it. */
export const AttachScreenshotBody = v.object({
  fileId: Id,
  key: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(1024, 'must be at most 1024 characters')),
  etag: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters')),
  mimeType: v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(255, 'must be at most 255 characters')),
  width: PixelSize,
  height: PixelSize,
  filesize: integerIn(1),
  originalFilename: v.optional(Text(255)),
  type: v.optional(v.picklist(SCREENSHOT_TYPES, `must be one of ${SCREENSHOT_TYPES.join(', ')}`)),
});
