import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A conditional create of one item; the transaction fails if the key already exists. */
export function putNew(item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } };
}

export function put(item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item } };
}

export async function transact(items: TransactItem[]): Promise<void> {
  await getDb().send(new TransactWriteCommand({ TransactItems: items }));
}
