import { getConfig } from '../config.js';
import type { MarkupRecord, MarkupType } from '../db/items.js';
import type { Plan } from '../db/plans.js';
import type { Role } from '../db/users.js';
import { atLeast } from './roles.js';

/** What a caller may do to a markup, as `scopes` strings. */
export function markupScopes(markup: MarkupRecord, role: Role, plan: Plan): string[] {
  const scopes = ['view-project'];
  if (atLeast(role, 'contributor')) {
    scopes.push('update-project');
    if (!markup.readOnly) scopes.push('create-thread');
  }
  if (atLeast(role, 'admin')) {
    scopes.push('delete-project');
    // Pausing needs the plan feature; resuming is always allowed (States and transitions).
    if (plan.pauseCommentsEnabled || markup.readOnly) scopes.push('update-project-read-only');
    if (plan.storageFeatureEnabled) scopes.push('manage-original');
  }
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
  role: Role;
  plan: Plan;
  /** Scheme and host of the request, for links served by this API. */
  origin: string;
  /** File fields to expand; without it the markup is metadata only (Markups rule 8). */
  include?: ReadonlySet<IncludeValue>;
  /** Lifetime in seconds of file URLs in expanded fields (the list's `ttl`). */
  fileUrlTtlSeconds?: number;
}

/**
 * The expanded file fields of a markup (`images`, `video`, `document`). The hook where the uploads
 * issue adds them: webpage markups have none, and no other type can be created yet.
 */
function fileFields(_markup: MarkupRecord, _context: MarkupViewContext): Record<string, unknown> {
  return {};
}

/**
 * The public Markup shape of the spec. Markups use ISO strings for their times (Conventions 4);
 * `isReady` is always reported. Type-specific file fields are added by the uploads issue.
 */
export function toPublicMarkup(markup: MarkupRecord, context: MarkupViewContext): Record<string, unknown> {
  const appUrl = getConfig().appUrl ?? context.origin;
  return {
    id: markup.id,
    createdAt: new Date(markup.createdAt).toISOString(),
    modifiedAt: new Date(markup.modifiedAt).toISOString(),
    deletedAt: null,
    type: markup.type,
    name: markup.name,
    markupUrl: `${appUrl}/markups/${markup.id}`,
    thumbnailUrl: markup.thumbnailState === 'ready' ? `${context.origin}/api/v2/markups/${markup.id}/thumbnail` : PLACEHOLDER_THUMBNAIL,
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
    ...(expandsFiles(markup.type, context.include) ? fileFields(markup, context) : {}),
  };
}
