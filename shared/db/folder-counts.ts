import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { childrenPartition, subfoldersPartition } from './items.js';
import type { IndexName } from './table.js';

/** What a folder holds directly: the `folderCount` and `projectCount` a child-items listing shows. */
export interface FolderCounts {
  folderCount: number;
  projectCount: number;
}

/** Items of one index partition, counted by DynamoDB (`Select: COUNT`: no item leaves the table). */
async function countPartition(index: IndexName, partitionValue: string): Promise<number> {
  const partitionKey = `${index}PK`;
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        IndexName: index,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': partitionKey },
        ExpressionAttributeValues: { ':pk': partitionValue },
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/**
 * A folder's direct subfolders and markups, counted from the children index (every child) and the
 * subfolders index (folders only). Counting at read time keeps every write path (create, move,
 * archive, delete) free of counters; both indexes are eventually consistent, so a child moved a
 * moment ago may still count in its old folder, and the markup count never goes below zero.
 */
export async function countFolderChildren(folderId: string): Promise<FolderCounts> {
  const [children, folders] = await Promise.all([countPartition('GSI2', childrenPartition(folderId)), countPartition('GSI5', subfoldersPartition(folderId))]);
  return { folderCount: folders, projectCount: Math.max(0, children - folders) };
}
