import { randomUUID } from 'node:crypto';
import { newFolderRecord, toItem, type MarkupRecord } from '../../shared/db/items.js';
import { putNew, transact } from '../../shared/db/transact.js';
import { getWorkspace } from '../../shared/db/workspaces.js';

/** A webpage markup record written directly, for tests of workers that need one to exist. */
export async function makeWebpageMarkupRecord(workspaceId: string, overrides: Partial<MarkupRecord> = {}): Promise<MarkupRecord> {
  const workspace = (await getWorkspace(workspaceId))!;
  const at = Date.now();
  const record: MarkupRecord = {
    kind: 'markup',
    id: randomUUID(),
    workspaceId,
    organizationId: workspace.organizationId,
    parentFolderId: workspace.rootFolderId,
    name: 'Fixture page',
    createdAt: at,
    modifiedAt: at,
    activityAt: at,
    type: 'webpage',
    url: 'https://example.com/',
    readOnly: false,
    status: 'editing',
    isReady: true,
    thumbnailState: 'pending',
    note: { id: randomUUID(), note: '', showNoteOnProjectOpen: false },
    retainOriginal: false,
    hasRetainedOriginal: false,
    activeThreads: 0,
    createdBy: randomUUID(),
    ...overrides,
  };
  await transact([putNew(toItem(record))]);
  return record;
}

export { newFolderRecord };
