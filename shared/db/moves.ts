import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { sortableTime } from './items.js';
import { queryAll } from './core/paging.js';
import { SORT_SEPARATOR, TABLE } from './core/table.js';
import { updateIfConditionHolds, type TransactItem } from './core/transact.js';
import { movesOutEntry, workspaceKey } from './workspaces.js';

/**
 * A folder moved into another workspace, recorded by the transaction that moved it, until the move
 * worker (functions/item-moves) has carried everything below it along: the subfolders (workspace,
 * ancestor ids), the markups and their retained originals. While `carrying`, the record sits in the
 * GSI1 partition of pending moves, which the local stack's start and the move worker's recovery
 * read to find a move whose job was lost; the source workspace's record names the folder under
 * `movesOut` (see `movesOutMarker`), so an item still stored in the source is authorized by its
 * destination. `carriedFolders`/`carriedMarkups` count records whose conditional write changed
 * them (an item is carried once, so a repeated batch never counts twice).
 */
export interface MoveRecord {
  folderId: string;
  organizationId: string;
  fromWorkspaceId: string;
  toWorkspaceId: string;
  state: 'carrying' | 'done';
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms of the last batch (or of the last time the job was queued): how a stalled move is told. */
  updatedAt: number;
  carriedFolders: number;
  carriedMarkups: number;
  batches: number;
  /** Epoch ms of a batch that found nothing left to carry; a second such batch finishes the move. */
  quietSince?: number;
  finishedAt?: number;
}

/** Days a finished move record is kept (TTL) for inspection. */
const DONE_TTL_SECONDS = 7 * 24 * 3600;

export const moveKey = (folderId: string) => ({ PK: `MOVE#${folderId}`, SK: 'MOVE' });
/** GSI1 partition of the moves still carrying, oldest first. */
export const PENDING_MOVES_PARTITION = 'MOVES#PENDING';

/**
 * The move record as a transaction item of the move itself: a new record, or one replacing the
 * finished record of an earlier move of the same folder (a folder carries one move at a time: its
 * `pendingMoveFrom` guards that).
 */
export function insertMove(record: MoveRecord): TransactItem {
  return {
    Put: {
      TableName: getConfig().tableName,
      Item: {
        ...moveKey(record.folderId),
        entity: 'Move',
        ...record,
        GSI1PK: PENDING_MOVES_PARTITION,
        GSI1SK: `${sortableTime(record.createdAt)}${SORT_SEPARATOR}${record.folderId}`,
      },
      ConditionExpression: 'attribute_not_exists(PK) OR #state = :done',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':done': 'done' },
    },
  };
}

/**
 * The source workspace's marker of a pending move, joined to the move's transaction: `movesOut`, a
 * string set of `<folderId>=<destination workspace id>` entries. It is not one of the workspace's
 * fields (no version change, never written back by a settings update).
 */
export function movesOutMarker(fromWorkspaceId: string, folderId: string, toWorkspaceId: string): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: workspaceKey(fromWorkspaceId),
      UpdateExpression: 'ADD movesOut :entry',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':entry': new Set([movesOutEntry(folderId, toWorkspaceId)]) },
    },
  };
}

export async function getMove(folderId: string): Promise<MoveRecord | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: moveKey(folderId), ConsistentRead: true }));
  return result.Item ? toRecord(result.Item) : undefined;
}

function toRecord(item: Record<string, unknown>): MoveRecord {
  const { PK: _pk, SK: _sk, entity: _entity, GSI1PK: _g1, GSI1SK: _s1, [TABLE.ttlAttribute]: _ttl, ...record } = item;
  return record as unknown as MoveRecord;
}

/** Every move still carrying (the pending partition of GSI1), oldest first. */
export async function pendingMoves(): Promise<MoveRecord[]> {
  const found: MoveRecord[] = [];
  for await (const item of queryAll('GSI1', PENDING_MOVES_PARTITION)) found.push(toRecord(item));
  return found;
}

/** Records one batch of a carrying move: what it carried, and whether it found nothing left (`quiet`). */
export async function recordMoveBatch(folderId: string, batch: { folders: number; markups: number; quiet: boolean }): Promise<void> {
  const now = Date.now();
  const quiet = batch.quiet ? 'SET updatedAt = :now, quietSince = if_not_exists(quietSince, :now)' : 'SET updatedAt = :now';
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: moveKey(folderId),
    UpdateExpression: `${quiet} ADD carriedFolders :f, carriedMarkups :m, batches :one${batch.quiet ? '' : ' REMOVE quietSince'}`,
    ConditionExpression: '#state = :carrying',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':now': now, ':f': batch.folders, ':m': batch.markups, ':one': 1, ':carrying': 'carrying' },
  });
}

/** Notes that the move's job was queued again (a stalled move is queued once per stall, not per read). */
export async function touchMove(folderId: string, seenUpdatedAt: number): Promise<boolean> {
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: moveKey(folderId),
    UpdateExpression: 'SET updatedAt = :now',
    ConditionExpression: '#state = :carrying AND updatedAt = :seen',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':now': Date.now(), ':seen': seenUpdatedAt, ':carrying': 'carrying' },
  });
}

/** Removes the source workspace's marker of the move (its `movesOut` entry). */
export async function clearMovesOut(fromWorkspaceId: string, folderId: string, toWorkspaceId: string): Promise<void> {
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: workspaceKey(fromWorkspaceId),
    UpdateExpression: 'DELETE movesOut :entry',
    ConditionExpression: 'attribute_exists(PK)',
    ExpressionAttributeValues: { ':entry': new Set([movesOutEntry(folderId, toWorkspaceId)]) },
  });
}

/** Marks the move done and takes it out of the pending partition (once; a repeat changes nothing). */
export async function finishMove(folderId: string): Promise<void> {
  const now = Date.now();
  await updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: moveKey(folderId),
    UpdateExpression: `SET #state = :done, finishedAt = :now, updatedAt = :now, ${TABLE.ttlAttribute} = :expires REMOVE GSI1PK, GSI1SK`,
    ConditionExpression: '#state = :carrying',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ':done': 'done',
      ':carrying': 'carrying',
      ':now': now,
      ':expires': Math.floor(now / 1000) + DONE_TTL_SECONDS,
    },
  });
}
