import * as v from 'valibot';
import { toPublicWorkspace } from '../../shared/db/workspaces.js';
import { pickWorkspaceId, resolveWorkspace } from '../../shared/domain/scope.js';
import { SLUG_MAX_LENGTH, SLUG_PATTERN } from '../../shared/domain/slugs.js';
import { updateWorkspace } from '../../shared/domain/workspaces.js';
import { ok, operation } from '../../shared/http/route.js';
import { Id, Name } from '../../shared/http/schemas.js';
import { WorkspaceQuery, WorkspaceSchema } from './schemas.js';

const Slug = v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(SLUG_MAX_LENGTH, `must be at most ${SLUG_MAX_LENGTH} characters`),
  v.regex(SLUG_PATTERN, 'must be lowercase letters and digits in hyphen-separated words'),
);

const Body = v.pipe(
  v.object({ name: v.optional(Name), slug: v.optional(Slug), workspaceId: v.optional(Id) }),
  v.check((body) => body.name !== undefined || body.slug !== undefined, 'name or slug is required'),
);

export const updateWorkspaceOperation = operation({
  operationId: 'updateWorkspace',
  summary: 'Rename a workspace or change its slug (slugs are unique in the organization: 409 when taken)',
  auth: 'apiKey',
  query: WorkspaceQuery,
  body: Body,
  responses: [{ status: 200, description: 'The updated workspace', schema: WorkspaceSchema }],
  handle: async ({ principal, query, body }) => {
    const workspace = await resolveWorkspace(principal, pickWorkspaceId(query.workspaceId, body.workspaceId));
    return ok(toPublicWorkspace(await updateWorkspace(workspace, { name: body.name, slug: body.slug })));
  },
});
