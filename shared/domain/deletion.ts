import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { itemKey, type ItemRecord } from '../db/items.js';

/**
 * Removes item records (folders and markups) with BatchWriteItem, 25 at a time, retrying what
 * DynamoDB leaves unprocessed. Callers decide what to remove (a folder's whole subtree, a set of
 * markups); what hangs off a markup (threads, files) is removed here too as later issues add it.
 */
export async function deleteItemRecords(records: readonly ItemRecord[]): Promise<void> {
  const tableName = getConfig().tableName;
  for (let i = 0; i < records.length; i += 25) {
    let requests: { DeleteRequest: { Key: Record<string, unknown> } }[] | undefined = records
      .slice(i, i + 25)
      .map((record) => ({ DeleteRequest: { Key: itemKey(record.id) } }));
    for (let attempt = 0; requests && requests.length > 0; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * 2 ** attempt)));
      const result = await getDb().send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = result.UnprocessedItems?.[tableName] as typeof requests;
    }
  }
}
