import { randomUUID } from 'node:crypto';
import { toOriginalItem, type OriginalRecord } from '../../shared/db/originals.js';
import { getPlan, savePlan, type Plan } from '../../shared/db/plans.js';
import { addStoredBytes } from '../../shared/db/storage.js';
import { put, transact } from '../../shared/db/core/transact.js';

/** Changes an organization's plan, as `admin plan set` does. */
export async function setPlan(organizationId: string, changes: Partial<Plan>): Promise<Plan> {
  const plan = { ...(await getPlan(organizationId)), ...changes };
  await savePlan(plan);
  return plan;
}

/**
 * A retained original as the uploads flow records it, with its bytes counted. Until the uploads
 * issue lands, this is how tests give a workspace originals to archive.
 */
export async function makeRetainedOriginal(
  overrides: Partial<OriginalRecord> & Pick<OriginalRecord, 'workspaceId' | 'organizationId'>,
): Promise<OriginalRecord> {
  const record: OriginalRecord = {
    markupId: randomUUID(),
    key: `originals/${randomUUID()}/design.psd`,
    filename: 'design.psd',
    mimeType: 'image/vnd.adobe.photoshop',
    filesize: 1000,
    state: 'retained',
    ...overrides,
  };
  await transact([put(toOriginalItem(record))]);
  await addStoredBytes(record.organizationId, 'originals', record.filesize);
  return record;
}
