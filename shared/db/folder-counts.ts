import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { childrenPartition } from './items.js';

/** What a folder holds directly: the `folderCount` and `projectCount` a child-items listing shows. */
export interface FolderCounts {
  folderCount: number;
  projectCount: number;
}

/**
 * A folder's direct subfolders and markups, from one read of its children index that returns only
 * each child's `kind` (1 MB of children per request). Counting at read time keeps every write path
 * (create, move, archive, delete) free of counters; the index is eventually consistent, so a child
 * moved a moment ago may still count in its old folder.
 */
export async function countFolderChildren(folderId: string): Promise<FolderCounts> {
  const counts: FolderCounts = { folderCount: 0, projectCount: 0 };
  let start: Record<string, unknown> | undefined;
  do {
    const page = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': childrenPartition(folderId) },
        ProjectionExpression: '#kind',
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExclusiveStartKey: start,
      }),
    );
    for (const child of page.Items ?? []) {
      if (child.kind === 'folder') counts.folderCount += 1;
      else counts.projectCount += 1;
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return counts;
}
