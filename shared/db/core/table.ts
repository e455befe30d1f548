/**
 * The single table's shape. The CDK data stack and the local stack both build the table from this,
 * so the emulator and AWS can never disagree on keys or indexes.
 */
export const TABLE = {
  partitionKey: 'PK',
  sortKey: 'SK',
  /** Items with this attribute (epoch seconds) are removed by DynamoDB TTL. */
  ttlAttribute: 'expiresAtEpoch',
  /**
   * Overloaded indexes; `shared/db/README.md` lists what each entity puts in them. Items use GSI1-3
   * for a folder's children in name, creation and activity order, GSI4 for a workspace's markups
   * by creation time, and GSI5 for folders to walk folder trees and for markups whose pending work
   * no job run took yet (the pending-work sweep). GSI6-GSI15 are the markup word index: a markup's
   * n-th indexed word in GSI(5+n) (`markupWordKeys`), all partitioned by `GSIWPK`.
   */
  indexes: [
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK', projection: 'ALL' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK', projection: 'ALL' },
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK', projection: 'ALL' },
    { name: 'GSI4', partitionKey: 'GSI4PK', sortKey: 'GSI4SK', projection: 'ALL' },
    { name: 'GSI5', partitionKey: 'GSI5PK', sortKey: 'GSI5SK', projection: 'ALL' },
    // The markup word index (issue 34, `markup-words.ts`): one index per word slot of a markup, keys
    // only, so a write that leaves a markup's words alone costs these indexes nothing. They share one
    // partition key attribute (the workspace's), which keeps the markup item small.
    { name: 'GSI6', partitionKey: 'GSIWPK', sortKey: 'GSI6SK', projection: 'KEYS_ONLY' },
    { name: 'GSI7', partitionKey: 'GSIWPK', sortKey: 'GSI7SK', projection: 'KEYS_ONLY' },
    { name: 'GSI8', partitionKey: 'GSIWPK', sortKey: 'GSI8SK', projection: 'KEYS_ONLY' },
    { name: 'GSI9', partitionKey: 'GSIWPK', sortKey: 'GSI9SK', projection: 'KEYS_ONLY' },
    { name: 'GSI10', partitionKey: 'GSIWPK', sortKey: 'GSI10SK', projection: 'KEYS_ONLY' },
    { name: 'GSI11', partitionKey: 'GSIWPK', sortKey: 'GSI11SK', projection: 'KEYS_ONLY' },
    { name: 'GSI12', partitionKey: 'GSIWPK', sortKey: 'GSI12SK', projection: 'KEYS_ONLY' },
    { name: 'GSI13', partitionKey: 'GSIWPK', sortKey: 'GSI13SK', projection: 'KEYS_ONLY' },
    { name: 'GSI14', partitionKey: 'GSIWPK', sortKey: 'GSI14SK', projection: 'KEYS_ONLY' },
    { name: 'GSI15', partitionKey: 'GSIWPK', sortKey: 'GSI15SK', projection: 'KEYS_ONLY' },
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

const KEY_ATTRIBUTES = new Set(['PK', 'SK', 'entity']);

/** A stored item as its entity's record: the item without its table keys and entity name. */
export function recordOf<T>(item: Record<string, unknown>): T {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !KEY_ATTRIBUTES.has(name))) as T;
}

/**
 * The attribute a record's version lives in (workspaces, folders, markups): every write of the
 * record adds 1 to it; a record written before it existed has none, which counts as version 0.
 * ETags carry it (`shared/http/etag.ts`).
 */
export const VERSION_ATTRIBUTE = 'version';

/**
 * A condition that holds while the record is still at `version` (names `#version`, values `:version`), for writes guarded by `If-Match`.
 */
export function versionCondition(version: number): { expression: string; names: Record<string, string>; values: Record<string, unknown> } {
  const expression = version === 0 ? '(attribute_not_exists(#version) OR #version = :version)' : '#version = :version';
  return { expression, names: { '#version': VERSION_ATTRIBUTE }, values: { ':version': version } };
}
