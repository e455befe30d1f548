import * as v from 'valibot';
import { Id, pageSchema } from './builders.js';

/**
 * The public shapes of markups and what is read about them (Resources: Markup; usage, tags, view
 * modes, page layouts, originals): the OpenAPI document describes the answers by these schemas, and
 * the domain's views are typed by them, so a view that drifts from its schema fails to compile.
 */

/** Markup event log sort keys are this many digits wide, so they sort by number (`shared/db/markup-events.ts`). */
export const MARKUP_EVENT_SEQ_DIGITS = 12;

/** The largest `after` a log read takes: beyond it sort keys would stop sorting by number. */
export const MAX_MARKUP_EVENT_SEQ = 10 ** MARKUP_EVENT_SEQ_DIGITS - 1;

const FileLink = { url: v.string(), mimeType: v.string(), filesize: v.number() };

/** MarkupImage: the spec's `url`, `mimeType`, `filesize`, plus the page id and its size when known. */
const MarkupImageSchema = v.object({ id: v.string(), ...FileLink, width: v.optional(v.number()), height: v.optional(v.number()) });

const MarkupDocumentSchema = v.object({
  pageCount: v.number(),
  pages: v.array(v.object({ number: v.number(), width: v.number(), height: v.number(), image: v.optional(v.object(FileLink)) })),
});

const MarkupVideoSchema = v.object({
  ...FileLink,
  durationSeconds: v.number(),
  width: v.number(),
  height: v.number(),
  posterUrl: v.string(),
});

/**
 * One view mode's full-page screenshot of a webpage markup (single reads): `url`, size and `layoutUrl` once ready, `error` when
 * unavailable.
 */
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
        percent: v.optional(
          v.pipe(v.number(), v.description('0–100, when the total is known: pages of a PDF, or the share of a video transcoded.')),
        ),
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

/** GET /markups: `{ data: [Markup], hasMore, nextCursor, prevCursor }` (spec Response column). */
export const MarkupListSchema = pageSchema(MarkupSchema);

/**
 * GET /markups/search pages forward only (`before=<nextCursor>`), so it has no prevCursor; each
 * Markup carries the extension field `unreadThreads` (the caller's unread threads of it).
 */
export const MarkupSearchPageSchema = pageSchema(v.object({ ...MarkupSchema.entries, unreadThreads: v.number() }), { prevCursor: false });

/** View modes as the live service answers them (DESIGN.md: listed as 204, described as returning data). */
export const ViewModeListSchema = v.object({ projectViewModes: v.array(ViewModeSchema) });

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

export const ArchivedOriginalSchema = v.object({ archivedFileSize: v.number() });

export const OriginalDownloadSchema = v.object({ url: v.string(), filename: v.string(), mimeType: v.string(), filesize: v.number() });

/** A markup as one caller sees it (Resources: Markup): what `toPublicMarkup` answers. */
export type MarkupView = v.InferOutput<typeof MarkupSchema>;

/** GET /markups/usage: the workspace's markup allowance and use. */
export type UsageView = v.InferOutput<typeof UsageSchema>;

/** GET /markups/{id}/tag: who may be mentioned, and who was. */
export type TagsView = v.InferOutput<typeof TagsSchema>;

/** A view mode with the number of threads placed in it. */
export type ViewModeView = v.InferOutput<typeof ViewModeSchema>;

/** A view mode's page layout. */
export type PageLayoutView = v.InferOutput<typeof PageLayoutSchema>;

/** DELETE /markups/{id}/original: the size of the archived file. */
export type ArchivedOriginalView = v.InferOutput<typeof ArchivedOriginalSchema>;

/** GET /markups/{id}/original: where to download the original. */
export type OriginalDownloadView = v.InferOutput<typeof OriginalDownloadSchema>;
