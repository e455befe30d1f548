import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { forEachLimit } from '../concurrency.js';
import { getConfig } from '../config.js';
import { isConditionFailure } from './core/errors.js';
import { getItem, type FolderRecord } from './items.js';
import { putNew, type TransactItem } from './core/transact.js';

/**
 * A folder name claim: one record per (parent folder, lower-cased name), held by the folder that
 * has that name. Creating, renaming and moving a folder write the claim with `attribute_not_exists`
 * in the same transaction as the folder, so two requests can never give sibling folders one name
 * (reading the siblings first cannot promise that: both requests read before either writes).
 */
export const folderNameKey = (parentFolderId: string, name: string) => ({
  PK: `FOLDERNAME#${parentFolderId}#${name.toLowerCase()}`,
  SK: 'FOLDERNAME',
});

/** The claim of `folder`'s name under its parent (none for a workspace's root and archive folders). */
export function claimName(folder: FolderRecord): TransactItem[] {
  if (!folder.parentFolderId) return [];
  return [putNew({ ...folderNameKey(folder.parentFolderId, folder.name), entity: 'FolderName', folderId: folder.id })];
}

/**
 * Gives up `folder`'s claim on its current name. Only the folder's own claim goes; a folder made
 * before claims existed has none, and that is no failure either.
 */
export function releaseName(folder: FolderRecord): TransactItem[] {
  if (!folder.parentFolderId) return [];
  return [
    {
      Delete: {
        TableName: getConfig().tableName,
        Key: folderNameKey(folder.parentFolderId, folder.name),
        ConditionExpression: 'attribute_not_exists(PK) OR folderId = :id',
        ExpressionAttributeValues: { ':id': folder.id },
      },
    },
  ];
}

/** Conditional deletes one request keeps in flight when releasing the names of a deleted tree. */
const RELEASE_CONCURRENCY = 16;

/** Deletes a claim only while `folderId` holds it; false when someone else does (or nobody). */
async function deleteClaim(key: Record<string, string>, folderId: string): Promise<boolean> {
  try {
    await getDb().send(
      new DeleteCommand({
        TableName: getConfig().tableName,
        Key: key,
        ConditionExpression: 'folderId = :id',
        ExpressionAttributeValues: { ':id': folderId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Drops the claims of deleted folders, each only while that folder still holds it: once a folder
 * is gone, `clearStaleClaim` may already have handed its name to a new sibling.
 */
export async function releaseNamesOf(folders: readonly FolderRecord[]): Promise<void> {
  await forEachLimit(folders, RELEASE_CONCURRENCY, async (folder) => {
    if (folder.parentFolderId) await deleteClaim(folderNameKey(folder.parentFolderId, folder.name), folder.id);
  });
}

/**
 * After a write lost the claim on `name` under `parentFolderId`: true when the claim turned out
 * stale (its folder is gone or no longer has that name there, as after a deletion cut short) and
 * was dropped, so the write may try the same name again; false when the name is really taken.
 */
export async function clearStaleClaim(parentFolderId: string, name: string): Promise<boolean> {
  const key = folderNameKey(parentFolderId, name);
  const claim = (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: key, ConsistentRead: true }))).Item;
  if (!claim) return true;
  const holder = await getItem(claim.folderId as string, true);
  if (holder && holder.parentFolderId === parentFolderId && holder.name.toLowerCase() === name.toLowerCase()) return false;
  return deleteClaim(key, claim.folderId as string);
}
