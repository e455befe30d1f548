import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../../config.js';
import { getDb } from '../../clients.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { BadRequestError } from '../../errors.js';
import { getCursorKey } from './cursor-keys.js';
import { TABLE, type IndexName } from './table.js';

export interface PageQuery {
  /** Distinguishes lists (and their orders) so one list's cursor is refused by another. */
  list: string;
  index?: IndexName;
  partitionValue: string;
  /** True when the list runs in ascending sort-key order. */
  ascending: boolean;
  limit: number;
  /** Next page: items after this cursor. */
  before?: string;
  /** Previous page: items before this cursor. */
  since?: string;
}

export interface Page<T> {
  items: T[];
  hasMore: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}

/**
 * One page of a key-ordered Query with `before`/`since` cursors (DESIGN.md: next page is
 * `before=<nextCursor>`, previous page `since=<prevCursor>`). It reads `limit + 1` items to know
 * whether another page exists, so a cursor is only handed out when following it yields items.
 */
export async function queryPage<T>(query: PageQuery, fromItem: (item: Record<string, unknown>) => T): Promise<Page<T>> {
  if (query.before && query.since) throw new BadRequestError('Pass either before or since, not both.');
  const key = await getCursorKey();
  const keyNames = keyAttributes(query.index);
  const backwards = query.since !== undefined;
  const cursor = query.before ?? query.since;
  const start = cursor ? decodePosition(key, query, cursor, backwards ? 'since' : 'before', keyNames) : undefined;

  const result = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      IndexName: query.index,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': keyNames.partition },
      ExpressionAttributeValues: { ':pk': query.partitionValue },
      ScanIndexForward: backwards ? !query.ascending : query.ascending,
      ExclusiveStartKey: start,
      Limit: query.limit + 1,
    }),
  );
  const raw = result.Items ?? [];
  const extra = raw.length > query.limit;
  const pageItems = raw.slice(0, query.limit);
  if (backwards) pageItems.reverse();
  const position = (item: Record<string, unknown> | undefined) => (item ? encodeCursor(key, query.list, pick(item, keyNames.all)) : null);

  if (backwards) {
    return {
      items: pageItems.map(fromItem),
      hasMore: pageItems.length > 0,
      nextCursor: position(pageItems.at(-1)),
      prevCursor: extra ? position(pageItems[0]) : null,
    };
  }
  return {
    items: pageItems.map(fromItem),
    hasMore: extra,
    nextCursor: extra ? position(pageItems.at(-1)) : null,
    prevCursor: cursor && pageItems.length > 0 ? position(pageItems[0]) : null,
  };
}

function keyAttributes(index: IndexName | undefined) {
  const definition = TABLE.indexes.find((candidate) => candidate.name === index);
  const partition = definition?.partitionKey ?? TABLE.partitionKey;
  const sort = definition?.sortKey ?? TABLE.sortKey;
  const all = [...new Set([TABLE.partitionKey, TABLE.sortKey, partition, sort])];
  return { partition, sort, all };
}

function decodePosition(
  key: Buffer,
  query: PageQuery,
  cursor: string,
  parameter: string,
  keyNames: ReturnType<typeof keyAttributes>,
): Record<string, string> {
  const position = decodeCursor(key, query.list, cursor, parameter);
  const valid = keyNames.all.every((name) => typeof position[name] === 'string') && position[keyNames.partition] === query.partitionValue;
  if (!valid) throw new BadRequestError(`${parameter} is not a valid cursor for this list.`, 'invalid-cursor');
  return position as Record<string, string>;
}

function pick(item: Record<string, unknown>, names: string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((name) => [name, item[name]]));
}

/**
 * Every item of one index partition, a page of 100 at a time. For admin tooling and for batch work
 * over a bounded partition (a workspace's retained originals), never for a request's list response.
 */
export function queryAll(index: IndexName, partitionValue: string): AsyncGenerator<Record<string, unknown>> {
  return queryPartition({ index, partitionValue, limit: 100 });
}

/**
 * Every item of a base-table partition, or of one sort-key prefix of it, read 1 MB at a time (the
 * request count grows with the bytes, not the items). Only for bounded ranges: a workspace's
 * members, what hangs off one markup (its threads and messages).
 */
export async function queryPrefix(
  partition: string,
  prefix?: string,
  options: { consistent?: boolean; filter?: QueryFilter; projection?: QueryProjection } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for await (const item of queryPartition({ partitionValue: partition, prefix, ...options })) items.push(item);
  return items;
}

/**
 * The items of a base-table partition whose sort keys lie between `from` and `to` (both included),
 * in key order, at most `limit` of them: one consistent Query. `last` is the sort key the read
 * stopped at when the range holds more than `limit` items (what lies after it was not read).
 */
export async function queryBetween(
  partition: string,
  from: string,
  to: string,
  limit: number,
): Promise<{ items: Record<string, unknown>[]; last?: string }> {
  const page = await getDb().send(
    new QueryCommand({
      TableName: getConfig().tableName,
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': partition, ':from': from, ':to': to },
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  return { items: page.Items ?? [], last: page.LastEvaluatedKey?.SK as string | undefined };
}

/**
 * Up to `limit` items of a base-table partition in key order, forward or `backward`, strictly after
 * the sort key `after` when given: one consistent Query with `Limit`, more only if DynamoDB's 1 MB
 * page ends first. Answers whether the partition has more.
 */
export async function queryRange(
  partition: string,
  options: { limit: number; backward: boolean; after?: string; projection?: QueryProjection },
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined = options.after === undefined ? undefined : { PK: partition, SK: options.after };
  do {
    const result = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': partition },
        ProjectionExpression: options.projection?.expression,
        ExpressionAttributeNames: options.projection?.names,
        ScanIndexForward: !options.backward,
        ConsistentRead: true,
        ExclusiveStartKey: start,
        Limit: options.limit - items.length,
      }),
    );
    items.push(...(result.Items ?? []));
    start = result.LastEvaluatedKey;
  } while (start && items.length < options.limit);
  return { items, more: start !== undefined };
}

/**
 * The items of one index partition that `filter` matches, read 1 MB at a time: for batch work that
 * takes what is left to do from a bounded partition (the markups of a folder not yet carried).
 */
export function queryMatching(index: IndexName, partitionValue: string, filter: QueryFilter): AsyncGenerator<Record<string, unknown>> {
  return queryPartition({ index, partitionValue, filter });
}

/**
 * The items of the whole table that `filter` matches, read 1 MB at a time: a Scan, for the admin
 * CLI's migrations only (markups with threads, legacy external users), never on a request path.
 */
export async function* scanMatching(filter: QueryFilter & { projection?: string }): AsyncGenerator<Record<string, unknown>> {
  let start: Record<string, unknown> | undefined;
  do {
    const page = await getDb().send(
      new ScanCommand({
        TableName: getConfig().tableName,
        FilterExpression: filter.expression,
        ExpressionAttributeNames: filter.names,
        ExpressionAttributeValues: filter.values,
        ProjectionExpression: filter.projection,
        ExclusiveStartKey: start,
      }),
    );
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

/**
 * A ProjectionExpression on a Query: only these attributes come back (DynamoDB still reads and
 * bills whole items; what it saves is the transfer, and the memory of items that may be 300 KB).
 */
export interface QueryProjection {
  expression: string;
  names?: Record<string, string>;
}

/** The base table's key attributes, as a projection. */
export const KEYS_ONLY: QueryProjection = { expression: '#keyPK, #keySK', names: { '#keyPK': 'PK', '#keySK': 'SK' } };

/** A FilterExpression on a Query: DynamoDB still reads (and bills) every item of the range, and returns the matching ones. */
export interface QueryFilter {
  expression: string;
  names?: Record<string, string>;
  values: Record<string, unknown>;
}

async function* queryPartition(query: {
  index?: IndexName;
  partitionValue: string;
  prefix?: string;
  /** Items per request; without it DynamoDB's 1 MB page. */
  limit?: number;
  consistent?: boolean;
  filter?: QueryFilter;
  projection?: QueryProjection;
}): AsyncGenerator<Record<string, unknown>> {
  const keyNames = keyAttributes(query.index);
  let start: Record<string, unknown> | undefined;
  do {
    const page = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        IndexName: query.index,
        KeyConditionExpression: query.prefix ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk',
        FilterExpression: query.filter?.expression,
        ProjectionExpression: query.projection?.expression,
        ExpressionAttributeNames: {
          '#pk': keyNames.partition,
          ...(query.prefix ? { '#sk': keyNames.sort } : {}),
          ...query.filter?.names,
          ...query.projection?.names,
        },
        ExpressionAttributeValues: {
          ':pk': query.partitionValue,
          ...(query.prefix ? { ':prefix': query.prefix } : {}),
          ...query.filter?.values,
        },
        ExclusiveStartKey: start,
        Limit: query.limit,
        ConsistentRead: query.consistent,
      }),
    );
    yield* page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}
