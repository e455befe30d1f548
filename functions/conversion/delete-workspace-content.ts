import * as v from 'valibot';
import { deleteWorkspaceContent } from '../../shared/domain/workspaces/content.js';
import { defineJob } from '../../shared/events/queue-worker.js';

/**
 * Removes what a deleted workspace held (shared/domain/workspaces/content.ts). Idempotent: a retry
 * finds less to delete, and every byte counter moves with a conditional write.
 */
export const deleteWorkspaceContentJob = defineJob({
  schema: v.object({
    type: v.literal('delete-workspace-content'),
    workspaceId: v.pipe(v.string(), v.uuid()),
    folderIds: v.pipe(v.array(v.pipe(v.string(), v.uuid())), v.maxLength(2)),
  }),
  run: async (job) => {
    await deleteWorkspaceContent(job.workspaceId, job.folderIds);
  },
});
