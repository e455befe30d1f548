import { resolveWorkspace } from '../../shared/domain/workspaces/scope.js';
import { NotImplementedError } from '../../shared/errors.js';
import { operation } from '../../shared/http/route.js';
import { BulkFromFilesBody } from './schemas.js';

export const bulkFromFilesOperation = operation({
  operationId: 'bulkCreateMarkupsFromFiles',
  summary: 'Create markups from uploads',
  description: 'Not implemented: always answers 501. Create each markup with POST /markups/from-files.',
  auth: 'apiKey',
  permission: 'markup:create',
  body: BulkFromFilesBody,
  responses: [{ status: 501, description: 'Not implemented' }],
  handle: async ({ principal, body }) => {
    // Refused callers learn so (401/403) as on every other route; allowed ones that it is not built. A body's
    // workspaceId names the workspace (session tokens have none of their own).
    const named = (body as { workspaceId?: unknown } | null)?.workspaceId;
    await resolveWorkspace(principal, typeof named === 'string' ? named : undefined, { useDefault: true });
    throw new NotImplementedError('Bulk creation from files is not implemented. Create each markup with POST /api/v2/markups/from-files.');
  },
});
