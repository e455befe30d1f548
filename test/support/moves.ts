import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getMove, moveKey, type MoveRecord } from '../../shared/db/moves.js';
import { eventually } from './polling.js';

/**
 * Polls the move record of a folder moved into another workspace until its worker finished it (or
 * the deadline), and answers the last record read: the caller's assertions then say what was left.
 */
export async function moveFinished(folderId: string, timeoutMs = 60_000): Promise<MoveRecord | undefined> {
  return eventually(
    () => getMove(folderId),
    (move) => move?.state === 'done',
    timeoutMs,
  );
}

/** Makes a recorded move look stalled (no batch for a minute), as one whose job was lost long ago. */
export async function backdateMove(folderId: string): Promise<void> {
  await getDb().send(
    new UpdateCommand({
      TableName: getConfig().tableName,
      Key: moveKey(folderId),
      UpdateExpression: 'SET updatedAt = :then',
      ExpressionAttributeValues: { ':then': Date.now() - 60_000 },
    }),
  );
}
