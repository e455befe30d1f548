import { getConfig } from '../config.js';
import { itemKey } from './items.js';
import { updateIfConditionHolds } from './transact.js';

/** Where a markup's rendered thumbnail is stored in the bucket. */
export const thumbnailObjectKey = (markupId: string) => `thumbnails/${markupId}.png`;

/**
 * Records the outcome of rendering a markup's thumbnail. Touches no index key, so it cannot race
 * with moves or renames; returns false when the markup no longer exists.
 */
export async function setThumbnail(markupId: string, outcome: { state: 'ready'; key: string } | { state: 'unavailable'; error: string }): Promise<boolean> {
  const ready = outcome.state === 'ready';
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markupId),
    UpdateExpression: ready ? 'SET thumbnailState = :state, thumbnailKey = :detail REMOVE thumbnailError' : 'SET thumbnailState = :state, thumbnailError = :detail',
    ConditionExpression: 'entity = :markup',
    ExpressionAttributeValues: { ':state': outcome.state, ':detail': ready ? outcome.key : outcome.error, ':markup': 'Markup' },
  });
}
