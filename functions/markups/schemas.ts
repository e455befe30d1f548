import * as v from 'valibot';
import { MAX_MARKUP_EVENT_SEQ } from '../../shared/schemas/markups.js';
import { MAX_FILES_PER_MARKUP } from '../../shared/domain/file-markups.js';
import { INCLUDE_VALUES, type IncludeValue } from '../../shared/domain/markup-view.js';
import { WEBHOOK_EVENT_TYPES } from '../../shared/domain/webhook-input.js';
import type { RawBodySpec } from '../../shared/http/route.js';
import { Cursor, HttpUrl, Id, Name, pageSchema, queryInteger } from '../../shared/http/schemas.js';

/** Markups above this many per batch are refused (the same bound as files per create-from-files). */
export const MAX_BATCH = 50;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Longest lifetime a caller may ask for file URLs in expansions: one week, as S3 presigning allows. */
export const MAX_TTL_SECONDS = 604_800;

export const MarkupIdParams = v.object({ id: Id });

function includeEntries(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * Markups rules 7 and 8: `include` is a comma-separated list of `media`, `images`, `videos`,
 * `documents`; any other value is a 400 naming it. An empty value asks for nothing.
 */
export const Include = v.pipe(
  v.string(),
  v.check(
    (value) => includeEntries(value).every((entry) => (INCLUDE_VALUES as readonly string[]).includes(entry)),
    (issue) => {
      const unknown = includeEntries(String(issue.input)).filter((entry) => !(INCLUDE_VALUES as readonly string[]).includes(entry));
      return `unrecognised include value${unknown.length > 1 ? 's' : ''} ${unknown.map((entry) => `"${entry}"`).join(', ')}; use a comma-separated list of ${INCLUDE_VALUES.join(', ')}`;
    },
  ),
  v.transform((value) => new Set(includeEntries(value) as IncludeValue[]) as ReadonlySet<IncludeValue>),
);

const FileLink = { url: v.string(), mimeType: v.string(), filesize: v.number() };

/** MarkupImage: the spec's `url`, `mimeType`, `filesize`, plus the page id and its size when known. */
const MarkupImageSchema = v.object({ id: v.string(), ...FileLink, width: v.optional(v.number()), height: v.optional(v.number()) });

const MarkupDocumentSchema = v.object({
  pageCount: v.number(),
  pages: v.array(v.object({ number: v.number(), width: v.number(), height: v.number(), image: v.optional(v.object(FileLink)) })),
});

const MarkupVideoSchema = v.object({ ...FileLink, durationSeconds: v.number(), width: v.number(), height: v.number(), posterUrl: v.string() });

/** One view mode's full-page screenshot of a webpage markup (single reads): `url`, size and `layoutUrl` once ready, `error` when unavailable. */
const PageScreenshotSchema = v.object({
  viewModeId: Id,
  state: v.picklist(['pending', 'ready', 'unavailable']),
  url: v.optional(v.string()),
  width: v.optional(v.number()),
  height: v.optional(v.number()),
  layoutUrl: v.optional(v.string()),
  error: v.optional(v.string()),
});

/** The public Markup shape, for the OpenAPI document; file fields appear as `include` asks (always on single reads). */
export const MarkupSchema = v.object({
  id: Id,
  createdAt: v.string(),
  modifiedAt: v.string(),
  deletedAt: v.nullable(v.string()),
  type: v.picklist(['webpage', 'image', 'pdf', 'video']),
  name: v.string(),
  markupUrl: v.string(),
  thumbnailUrl: v.string(),
  activeThreads: v.number(),
  readOnly: v.boolean(),
  status: v.picklist(['editing']),
  note: v.object({ id: Id, projectId: Id, note: v.string(), showNoteOnProjectOpen: v.boolean() }),
  projectReviews: v.array(v.object({ projectId: Id, userId: Id, comment: v.string(), createdAt: v.number() })),
  scopes: v.array(v.string()),
  retainOriginal: v.boolean(),
  hasRetainedOriginal: v.boolean(),
  isReady: v.boolean(),
  workspaceId: Id,
  parentFolderId: Id,
  url: v.optional(v.string()),
  images: v.optional(v.array(MarkupImageSchema)),
  document: v.optional(MarkupDocumentSchema),
  video: v.optional(MarkupVideoSchema),
  originalMimeType: v.optional(v.string()),
  conversionStatus: v.optional(v.picklist(['pending', 'ready', 'failed'])),
  conversionError: v.optional(v.string()),
  conversionProgress: v.optional(
    v.pipe(
      v.object({
        percent: v.optional(v.pipe(v.number(), v.description('0–100, when the total is known: pages of a PDF, or the share of a video transcoded.'))),
        pagesConverted: v.optional(v.pipe(v.number(), v.description('Pages of a PDF or multi-page TIFF converted so far.'))),
        pageCount: v.optional(v.pipe(v.number(), v.description('Pages the PDF has.'))),
      }),
      v.description('Extension: while `conversionStatus` is `pending`, how far the conversion has come (empty until the worker starts).'),
    ),
  ),
  pageScreenshots: v.optional(v.array(PageScreenshotSchema)),
});

export const UsageSchema = v.object({
  scope: v.literal('Workspace'),
  used: v.number(),
  bundleUsed: v.number(),
  limit: v.nullable(v.number()),
  remaining: v.nullable(v.number()),
  totalRemaining: v.nullable(v.number()),
  isUnlimited: v.boolean(),
  enforcementEnabled: v.boolean(),
  isCustomOverride: v.boolean(),
  warningThreshold: v.number(),
  isWarning: v.boolean(),
  isLimitReached: v.boolean(),
  bundleBalance: v.number(),
  isDrawingOnBundle: v.boolean(),
  averageMonthlyUsage: v.nullable(v.number()),
  periodStart: v.string(),
  periodEnd: v.string(),
});

export const TagsSchema = v.object({
  taggable: v.array(v.object({ id: Id, name: v.string(), email: v.nullable(v.string()), role: v.string() })),
  tagged: v.array(v.object({ id: Id, name: v.string(), email: v.string() })),
});

export const ViewModeSchema = v.object({
  id: Id,
  category: v.picklist(['desktop', 'tablet', 'mobile']),
  name: v.string(),
  width: v.number(),
  height: v.number(),
  threadCount: v.number(),
});

/** One markup to create from an address (POST /markups/url and each entry of bulk/from-url); Markups rule 1: over http or https. */
export const UrlMarkupBody = v.object({
  url: HttpUrl,
  name: v.optional(Name),
  workspaceId: v.optional(Id),
  parentFolderId: v.optional(Id),
});

export const MarkupIds = v.pipe(
  v.array(Id),
  v.minLength(1, 'must list at least one markup id'),
  v.maxLength(MAX_BATCH, `must list at most ${MAX_BATCH} markup ids`),
);

/** Query fields shared by the markup list and search: the workspace, a page, file URL lifetime, expansions. */
export const MarkupPageQueryEntries = {
  workspaceId: v.optional(Id),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
  before: v.optional(Cursor),
  ttl: v.optional(queryInteger(1, MAX_TTL_SECONDS)),
  include: v.optional(Include),
};

export const ListMarkupsQuery = v.object({
  ...MarkupPageQueryEntries,
  since: v.optional(Cursor),
});

export const SearchMarkupsQuery = v.object({
  ...MarkupPageQueryEntries,
  query: v.optional(v.pipe(v.string(), v.maxLength(200, 'must be at most 200 characters')), ''),
});

/** GET /markups: `{ data: [Markup], hasMore, nextCursor, prevCursor }` (spec Response column). */
export const MarkupListSchema = pageSchema(MarkupSchema);

/**
 * GET /markups/search pages forward only (`before=<nextCursor>`), so it has no prevCursor; each
 * Markup carries the extension field `unreadThreads` (the caller's unread threads of it).
 */
export const MarkupSearchPageSchema = pageSchema(v.object({ ...MarkupSchema.entries, unreadThreads: v.number() }), { prevCursor: false });

/** View modes as the live service answers them (DESIGN.md: listed as 204, described as returning data). */
export const ViewModeListSchema = v.object({ projectViewModes: v.array(ViewModeSchema) });

export const PageLayoutParams = v.object({ id: Id, viewModeId: Id });

const PageBoxSchema = v.object({ x: v.number(), y: v.number(), width: v.number(), height: v.number() });

/** A view mode's page layout: element boxes by canonical CSS path, and thread selectors located on the page (null: not found). */
export const PageLayoutSchema = v.object({
  viewModeId: Id,
  width: v.number(),
  height: v.number(),
  truncated: v.boolean(),
  elements: v.array(v.object({ path: v.string(), ...PageBoxSchema.entries })),
  located: v.record(v.string(), v.nullable(PageBoxSchema)),
});

export const ReadOnlyBody = v.object({ readOnly: v.boolean() });

export const RetainOriginalBody = v.object({ retainOriginal: v.boolean() });

export const ArchivedOriginalSchema = v.object({ archivedFileSize: v.number() });

export const OriginalDownloadSchema = v.object({ url: v.string(), filename: v.string(), mimeType: v.string(), filesize: v.number() });

/** `workspaceId`, which the spec marks required: a workspace key may leave it out (its own workspace), an organization key must name it (DESIGN.md). */
const RequiredWorkspaceId = v.optional(
  v.pipe(Id, v.description('The workspace of the new markup. A workspace-scoped key may leave it out (its own workspace); an organization key must name it (400 otherwise).')),
);

export const FilesMarkupBody = v.object({
  workspaceId: RequiredWorkspaceId,
  fileIds: v.pipe(
    v.array(Id),
    v.minLength(1, 'must list at least one file id'),
    v.maxLength(MAX_FILES_PER_MARKUP, `must list at most ${MAX_FILES_PER_MARKUP} file ids`),
  ),
  name: v.optional(Name),
  parentFolderId: v.optional(Id),
});

/** Limits: "Multipart create-from-file request size: 20MB for the whole request". */
export const MAX_FILE_REQUEST_BYTES = 20 * 1024 * 1024;

export const FileMarkupQuery = v.object({
  workspaceId: RequiredWorkspaceId,
  name: v.optional(Name),
  parentFolderId: v.optional(Id),
});

/** POST /markups/file: one `file` part of a multipart form. */
export const FileForm: RawBodySpec = {
  mediaType: 'multipart/form-data',
  maxBytes: MAX_FILE_REQUEST_BYTES,
  schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
};

export const MarkupIdsBody = v.object({ markupIds: MarkupIds });

export const BulkMoveBody = v.object({ markupIds: MarkupIds, targetFolderId: Id });

export const BulkFromUrlBody = v.object({
  items: v.pipe(v.array(UrlMarkupBody), v.minLength(1, 'must hold at least one item'), v.maxLength(MAX_BATCH, `must hold at most ${MAX_BATCH} items`)),
});

/** POST /markups/bulk/from-files answers 501 to any body. */
export const BulkFromFilesBody = v.unknown();

/** `after` of GET /markups/{id}/events: a seq (0, the default, reads from the first entry). */
export const MarkupEventsQuery = v.object({
  after: v.optional(queryInteger(0, MAX_MARKUP_EVENT_SEQ)),
  limit: v.optional(queryInteger(1, MAX_PAGE_SIZE)),
});

/** The webhook body of an event (DESIGN.md "Webhook deliveries"): the same bytes webhooks and live messages carry. */
export const MarkupEventBodySchema = v.object({
  id: Id,
  type: v.picklist(WEBHOOK_EVENT_TYPES),
  workspaceId: Id,
  createdAt: v.string(),
  data: v.object({
    markup: v.nullable(v.record(v.string(), v.unknown())),
    user: v.nullable(v.record(v.string(), v.unknown())),
    comment: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
    message: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  }),
});

/** GET /markups/{id}/events: `{ data: [{ seq, event }], hasMore, nextCursor }`, forward only (`after=<nextCursor>`). */
export const MarkupEventPageSchema = pageSchema(v.object({ seq: v.number(), event: MarkupEventBodySchema }), { prevCursor: false });
