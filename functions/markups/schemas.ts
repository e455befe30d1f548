import * as v from 'valibot';
import { INCLUDE_VALUES, type IncludeValue } from '../../shared/domain/markup-view.js';
import { Cursor, Id, Name, queryInteger } from '../../shared/http/schemas.js';

/** Markups above this many per batch are refused (the same bound as files per create-from-files). */
export const MAX_BATCH = 50;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
/** Longest lifetime a caller may ask for file URLs in expansions: one week, as S3 presigning allows. */
export const MAX_TTL_SECONDS = 604_800;
export const MAX_URL_LENGTH = 2048;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Markups rule 1: the address of a webpage or of a supported file, over http or https. */
export const HttpUrl = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'must not be empty'),
  v.maxLength(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
  v.check(isHttpUrl, 'must be an absolute http or https URL'),
);

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
  threadCount: v.number(),
});

/** One markup to create from an address (POST /markups/url and each entry of bulk/from-url). */
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
