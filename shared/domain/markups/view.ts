import { allows, type AnyRole } from '../../auth/permissions.js';
import { conversionProgressOf, type ConversionProgress } from '../../db/conversion-progress.js';
import type { MarkupRecord, MarkupType, StoredFile } from '../../db/items.js';
import type { Plan } from '../../db/plans.js';
import { DEFAULT_URL_TTL_SECONDS, presignedGetUrl } from '../../storage/urls.js';
import type { ChildMarkupView } from '../../schemas/items.js';
import type { MarkupView } from '../../schemas/markups.js';
import { VIEW_MODES } from './view-modes.js';

/** What a caller may do to a markup, as `scopes` strings, read from the permission table. */
export function markupScopes(markup: MarkupRecord, role: AnyRole, plan: Plan): string[] {
  const scopes = ['view-project'];
  if (allows(role, 'markup:rename')) scopes.push('update-project');
  if (allows(role, 'thread:create') && !markup.readOnly) scopes.push('create-thread');
  if (allows(role, 'markup:delete')) scopes.push('delete-project');
  // Pausing needs the plan feature; resuming is always allowed (States and transitions).
  if (allows(role, 'markup:read-only') && (plan.pauseCommentsEnabled || markup.readOnly)) scopes.push('update-project-read-only');
  if (allows(role, 'original:manage') && markup.hasRetainedOriginal) scopes.push('manage-original');
  return scopes;
}

/** A clear "no preview" picture for markups without a rendered thumbnail. */
export const PLACEHOLDER_THUMBNAIL =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200"><rect width="320" height="200" fill="#eef0f3"/><text x="160" y="106" font-family="sans-serif" font-size="16" fill="#6b7280" text-anchor="middle">No preview</text></svg>',
  );

/** Values of the `include` parameter (Markups rule 7). */
export const INCLUDE_VALUES = ['media', 'images', 'videos', 'documents'] as const;
export type IncludeValue = (typeof INCLUDE_VALUES)[number];

/** The markup type whose file field each specific include value expands; `media` expands all three. */
const EXPANDED_TYPE: Record<Exclude<IncludeValue, 'media'>, MarkupType> = { images: 'image', videos: 'video', documents: 'pdf' };

/** What a single-markup read uses: "files always included" (GET /markups/:id). */
export const INCLUDE_ALL: ReadonlySet<IncludeValue> = new Set(['media']);

/** True when `include` asks for the file field of a markup of this type (each value expands only its own type). */
export function expandsFiles(type: MarkupType, include: ReadonlySet<IncludeValue> | undefined): boolean {
  if (!include || include.size === 0) return false;
  if (include.has('media')) return type !== 'webpage';
  return Object.entries(EXPANDED_TYPE).some(([value, expanded]) => expanded === type && include.has(value as IncludeValue));
}

export interface MarkupViewContext {
  role: AnyRole;
  plan: Plan;
  /** The web app markups link to (`markupUrl`, and `thumbnailUrl` through its `/api/*`), resolved once per request by the HTTP layer. */
  appUrl: string;
  /** File fields to expand; without it the markup is metadata only (Markups rule 8). */
  include?: ReadonlySet<IncludeValue>;
  /** Lifetime in seconds of file URLs in expanded fields (the list's `ttl`). */
  fileUrlTtlSeconds?: number;
}

/** A stored file as a client may fetch it: a presigned GET that serves the bytes as stored. */
async function fileLink(file: StoredFile, ttlSeconds: number): Promise<{ url: string; mimeType: string; filesize: number }> {
  return {
    url: await presignedGetUrl(file.key, { ttlSeconds, contentType: file.mimeType, filename: file.filename }),
    mimeType: file.mimeType,
    filesize: file.filesize,
  };
}

const ttlOf = (context: Pick<MarkupViewContext, 'fileUrlTtlSeconds'>) => context.fileUrlTtlSeconds ?? DEFAULT_URL_TTL_SECONDS;

/**
 * The expanded file field of a markup (Markups rule 7), by its type: `images` on image markups
 * (each `id`, `url`, `mimeType`, `filesize`, and `width`/`height` when known; `url` serves the file
 * exactly as uploaded); `document` on PDF markups once converted (`pageCount`, `pages` with their
 * size and, when rendered, `image`); `video` on video markups once converted (`url` of the web
 * rendition, `mimeType`, `filesize`, `durationSeconds`, `width`, `height`, `posterUrl`).
 */
async function fileFields(markup: MarkupRecord, context: MarkupViewContext): Promise<Pick<MarkupView, 'images' | 'document' | 'video'>> {
  const ttlSeconds = ttlOf(context);
  switch (markup.type) {
    case 'image':
      return {
        images: await Promise.all(
          (markup.images ?? []).map(async (image) => ({
            id: image.id,
            ...(await fileLink(image, ttlSeconds)),
            ...(image.width !== undefined && image.height !== undefined ? { width: image.width, height: image.height } : {}),
          })),
        ),
      };
    case 'pdf': {
      const document = markup.document;
      if (!document) return {};
      const pages = await Promise.all(
        document.pages.map(async (page) => ({
          number: page.number,
          width: page.width,
          height: page.height,
          ...(page.image ? { image: await fileLink(page.image, ttlSeconds) } : {}),
        })),
      );
      return { document: { pageCount: document.pageCount, pages } };
    }
    case 'video': {
      const video = markup.video;
      if (!video) return {};
      const [file, posterUrl] = await Promise.all([
        fileLink(video.file, ttlSeconds),
        presignedGetUrl(video.poster.key, { ttlSeconds, contentType: video.poster.mimeType }),
      ]);
      return { video: { ...file, durationSeconds: video.durationSeconds, width: video.width, height: video.height, posterUrl } };
    }
    case 'webpage':
      return {};
  }
}

/**
 * Where `thumbnailUrl` points: a rendered thumbnail when there is one (webpages), else the first
 * picture of the markup's files (an image markup's first image, a PDF's first rendered page, a
 * video's poster), else the "No preview" placeholder.
 */
async function thumbnailUrlOf(markup: MarkupRecord, context: CardContext): Promise<string> {
  // Through the app's origin, not the request's: behind CloudFront a request reaches the function at
  // the execute-api host, which the app's Content-Security-Policy (img-src) does not admit, while
  // the app's origin serves /api/* too (locally both are the gateway).
  if (markup.thumbnailState === 'ready' && markup.thumbnailKey) return `${context.appUrl}/api/v2/markups/${markup.id}/thumbnail`;
  const picture = markup.images?.[0] ?? markup.document?.pages[0]?.image ?? markup.video?.poster;
  return picture ? presignedGetUrl(picture.key, { ttlSeconds: ttlOf(context), contentType: picture.mimeType }) : PLACEHOLDER_THUMBNAIL;
}

/** What a markup's card needs of the view context: links only, no role or plan. */
type CardContext = Pick<MarkupViewContext, 'appUrl' | 'fileUrlTtlSeconds'>;

/**
 * What a markup's card shows, from the same helpers as GET /markups/{id} (`toPublicMarkup`):
 * `markupType` (the Markup's `type`; a child listing's `type` says folder or markup),
 * `thumbnailUrl`, `activeThreads`, `isReady` and the conversion state. Child listings carry these so
 * a folder opens with one request, not one per markup; nothing is read, the listed record has it all.
 */
export async function markupCardFields(markup: MarkupRecord, context: CardContext): Promise<MarkupCardFields> {
  return {
    markupType: markup.type,
    thumbnailUrl: await thumbnailUrlOf(markup, context),
    activeThreads: markup.activeThreads,
    isReady: markup.isReady,
    ...conversionFields(markup),
  };
}

/** What a markup's card adds to a child listing's folder item (but the caller's `unreadThreads`). */
export type MarkupCardFields = Pick<ChildMarkupView, 'markupType' | 'thumbnailUrl' | 'activeThreads' | 'isReady' | ConversionField>;

/** Why a view mode of a webpage markup made before full-page screenshots existed has none. */
export const NO_PAGE_SCREENSHOT = 'This markup was rendered before full-page screenshots existed; create it again to get them.';

/**
 * `pageScreenshots` of a webpage markup: per view mode (VIEW_MODES order) its state, and once ready
 * the PNG's presigned `url` (like the markup's other pictures; a full page is too large for a
 * function's answer), its size in CSS pixels and where its layout is read (`layoutUrl`, an API
 * route authorized like this read), or the reason it is unavailable.
 */
async function pageScreenshotsOf(markup: MarkupRecord, context: MarkupViewContext): Promise<NonNullable<MarkupView['pageScreenshots']>> {
  return Promise.all(
    VIEW_MODES.map(async (mode) => {
      const screenshot = markup.pageScreenshots?.[mode.id] ?? { state: 'unavailable' as const, error: NO_PAGE_SCREENSHOT };
      if (screenshot.state === 'pending') return { viewModeId: mode.id, state: 'pending' };
      if (screenshot.state === 'unavailable') return { viewModeId: mode.id, state: 'unavailable', error: screenshot.error };
      return {
        viewModeId: mode.id,
        state: 'ready',
        url: await presignedGetUrl(screenshot.key, { ttlSeconds: ttlOf(context), contentType: 'image/png' }),
        width: screenshot.width,
        height: screenshot.height,
        layoutUrl: `${context.appUrl}/api/v2/markups/${markup.id}/page-screenshots/${mode.id}/layout`,
      };
    }),
  );
}

type ConversionField = 'originalMimeType' | 'conversionStatus' | 'conversionError';

/** Conversion state of file markups; reported whether or not files are expanded. */
function conversionFields(markup: MarkupRecord): Pick<MarkupView, ConversionField> {
  if (markup.type === 'webpage') return {};
  return {
    ...(markup.originalMimeType ? { originalMimeType: markup.originalMimeType } : {}),
    ...(markup.conversionStatus ? { conversionStatus: markup.conversionStatus } : {}),
    ...(markup.conversionError ? { conversionError: markup.conversionError } : {}),
  };
}

/** How far a pending conversion has come (an extension: the app's progress bar); nothing once it ended. */
async function progressFields(markup: MarkupRecord): Promise<{ conversionProgress?: ConversionProgress }> {
  if (markup.type === 'webpage' || markup.conversionStatus !== 'pending') return {};
  return { conversionProgress: (await conversionProgressOf(markup.id)) ?? {} };
}

/** Where a markup opens in the web app (`markupUrl`), the same on every shape that links to it. */
export const markupUrlOf = (appUrl: string, markupId: string): string => `${appUrl}/markups/${markupId}`;

/**
 * The public Markup shape of the spec. Markups use ISO strings for their times (Conventions 4);
 * `isReady` is always reported, file fields only when `include` asks for them (Markups rule 8).
 * Asynchronous because file URLs are presigned.
 */
export async function toPublicMarkup(markup: MarkupRecord, context: MarkupViewContext): Promise<MarkupView> {
  const [thumbnailUrl, files, progress, pageScreenshots] = await Promise.all([
    thumbnailUrlOf(markup, context),
    expandsFiles(markup.type, context.include) ? fileFields(markup, context) : {},
    progressFields(markup),
    markup.type === 'webpage' && context.include?.has('media') ? pageScreenshotsOf(markup, context) : undefined,
  ]);
  return {
    id: markup.id,
    createdAt: new Date(markup.createdAt).toISOString(),
    modifiedAt: new Date(markup.modifiedAt).toISOString(),
    deletedAt: null,
    type: markup.type,
    name: markup.name,
    markupUrl: markupUrlOf(context.appUrl, markup.id),
    thumbnailUrl,
    activeThreads: markup.activeThreads,
    readOnly: markup.readOnly,
    status: markup.status,
    note: { id: markup.note.id, projectId: markup.id, note: markup.note.note, showNoteOnProjectOpen: markup.note.showNoteOnProjectOpen },
    projectReviews: [],
    scopes: markupScopes(markup, context.role, context.plan),
    retainOriginal: markup.retainOriginal,
    hasRetainedOriginal: markup.hasRetainedOriginal,
    isReady: markup.isReady,
    workspaceId: markup.workspaceId,
    parentFolderId: markup.parentFolderId,
    ...(markup.type === 'webpage' ? { url: markup.url } : {}),
    ...conversionFields(markup),
    ...progress,
    ...files,
    ...(pageScreenshots ? { pageScreenshots } : {}),
  };
}

/** Many markups in one view context (list and search pages). */
export function toPublicMarkups(markups: readonly MarkupRecord[], context: MarkupViewContext): Promise<MarkupView[]> {
  return Promise.all(markups.map((markup) => toPublicMarkup(markup, context)));
}
