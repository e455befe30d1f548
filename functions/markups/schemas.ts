import * as v from 'valibot';
import { MAX_MARKUP_EVENT_SEQ } from '../../shared/schemas/markups.js';
import { MAX_FILES_PER_MARKUP } from '../../shared/domain/markups/file-markups.js';
import { INCLUDE_VALUES, type IncludeValue } from '../../shared/domain/markups/view.js';
import { WEBHOOK_EVENT_TYPES } from '../../shared/schemas/webhooks.js';
import type { RawBodySpec } from '../../shared/http/route.js';
import { Cursor, HttpUrl, Id, Name, pageSchema, queryInteger } from '../../shared/http/schemas.js';

/** The answers' schemas are the domain's views' types: they live in shared/schemas. */
export {
  ArchivedOriginalSchema,
  MarkupListSchema,
  MarkupSchema,
  MarkupSearchPageSchema,
  OriginalDownloadSchema,
  PageLayoutSchema,
  TagsSchema,
  UsageSchema,
  ViewModeListSchema,
  ViewModeSchema,
} from '../../shared/schemas/markups.js';

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

export const PageLayoutParams = v.object({ id: Id, viewModeId: Id });

export const ReadOnlyBody = v.object({ readOnly: v.boolean() });

export const RetainOriginalBody = v.object({ retainOriginal: v.boolean() });

/**
 * `workspaceId`, which the spec marks required: a workspace key may leave it out (its own workspace), an organization key must name it
 * (DESIGN.md).
 */
const RequiredWorkspaceId = v.optional(
  v.pipe(
    Id,
    v.description(
      'The workspace of the new markup. A workspace-scoped key may leave it out (its own workspace); an organization key must name it (400 otherwise).',
    ),
  ),
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
  items: v.pipe(
    v.array(UrlMarkupBody),
    v.minLength(1, 'must hold at least one item'),
    v.maxLength(MAX_BATCH, `must hold at most ${MAX_BATCH} items`),
  ),
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
