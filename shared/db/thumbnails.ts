import { getConfig } from '../config.js';
import { markupObjectPrefix } from '../storage/objects.js';
import { itemKey } from './items.js';
import { updateIfConditionHolds } from './core/transact.js';

/**
 * Where a webpage markup's rendered thumbnail is stored: under the markup's prefix, which its
 * deletion empties (records from before name `thumbnails/<id>.png` in `thumbnailKey`, deleted by key).
 */
export const thumbnailObjectKey = (markupId: string) => `${markupObjectPrefix(markupId)}thumbnail.png`;

/**
 * Records the outcome of rendering a webpage markup's thumbnail. Touches no index key but the
 * pending-work one, so it cannot race with moves or renames; returns false when the markup no
 * longer exists.
 */
export async function setThumbnail(
  markupId: string,
  outcome: { state: 'ready'; key: string } | { state: 'unavailable'; error: string },
): Promise<boolean> {
  const ready = outcome.state === 'ready';
  return updateIfConditionHolds({
    TableName: getConfig().tableName,
    Key: itemKey(markupId),
    // The thumbnail was a webpage's only pending work: it leaves the pending-work index (items.ts `pendingWorkKeys`).
    UpdateExpression: ready
      ? 'SET thumbnailState = :state, thumbnailKey = :detail REMOVE thumbnailError, GSI5PK, GSI5SK'
      : 'SET thumbnailState = :state, thumbnailError = :detail REMOVE GSI5PK, GSI5SK',
    ConditionExpression: 'entity = :markup',
    ExpressionAttributeValues: { ':state': outcome.state, ':detail': ready ? outcome.key : outcome.error, ':markup': 'Markup' },
  });
}
