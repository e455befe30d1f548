/**
 * The single table's shape. The CDK data stack and the local stack both build the table from this,
 * so the emulator and AWS can never disagree on keys or indexes.
 */
export const TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  /** Items with this attribute (epoch seconds) are removed by DynamoDB TTL. */
  ttlAttribute: 'expiresAtEpoch',
  indexes: [
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
  ],
} as const;

export type IndexName = (typeof TABLE.indexes)[number]['name'];

/** Key attributes present on every item. */
export interface KeyAttributes {
  PK: string;
  SK: string;
}

/** Separates a sort-key prefix from its tie-breaking id; sorts below every printable character. */
export const SORT_SEPARATOR = '\u0001';
