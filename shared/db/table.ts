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
   * no job run took yet (the pending-work sweep).
   */
  indexes: [
    { name: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { name: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
    { name: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
    { name: 'GSI4', partitionKey: 'GSI4PK', sortKey: 'GSI4SK' },
    { name: 'GSI5', partitionKey: 'GSI5PK', sortKey: 'GSI5SK' },
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

/** A condition that holds while the record is still at `version` (names `#version`, values `:version`), for writes guarded by `If-Match`. */
export function versionCondition(version: number): { expression: string; names: Record<string, string>; values: Record<string, unknown> } {
  const expression = version === 0 ? '(attribute_not_exists(#version) OR #version = :version)' : '#version = :version';
  return { expression, names: { '#version': VERSION_ATTRIBUTE }, values: { ':version': version } };
}
