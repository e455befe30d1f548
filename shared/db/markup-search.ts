import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { decodeCursor, encodeCursor } from '../http/cursor.js';
import { BadRequestError } from '../http/errors.js';
import { getCursorKey } from './cursor-keys.js';
import { fromItem, workspaceMarkupsPartition, type MarkupRecord } from './items.js';

/**
 * Items a search request may read before it answers with what it found so far. A rare term in a
 * huge workspace then takes several requests (each with a cursor) instead of one that times out.
 */
export const SEARCH_READ_BUDGET = 5000;
const SEARCH_QUERY_PAGE = 250;

export interface SearchPage {
  items: MarkupRecord[];
  hasMore: boolean;
  nextCursor: string | null;
}

const GSI4_KEY_ATTRIBUTES = ['PK', 'SK', 'GSI4PK', 'GSI4SK'] as const;

/**
 * Markups of the workspace, in every folder, whose name or URL contains `text` (case-insensitive),
 * newest first. It queries the workspace's markup index (GSI4) with a filter on the lowercase
 * `searchText` attribute and keeps reading until it holds `limit + 1` matches (so `hasMore` is
 * exact), the partition ends, or the read budget is spent (then `hasMore` is true and the cursor
 * continues from where reading stopped). Never a Scan.
 */
export async function searchWorkspaceMarkups(workspaceId: string, options: { text: string; limit: number; before?: string }): Promise<SearchPage> {
  const needle = options.text.trim().toLowerCase();
  const partition = workspaceMarkupsPartition(workspaceId);
  const list = `markups:search:${createHash('sha256').update(needle).digest('base64url').slice(0, 16)}`;
  const key = await getCursorKey();
  let start = options.before ? decodeSearchCursor(key, list, options.before, partition) : undefined;
  const matches: Record<string, unknown>[] = [];
  let read = 0;
  let exhausted = false;
  while (matches.length <= options.limit) {
    const result = await getDb().send(
      new QueryCommand({
        TableName: getConfig().tableName,
        IndexName: 'GSI4',
        KeyConditionExpression: 'GSI4PK = :pk',
        ...(needle ? { FilterExpression: 'contains(searchText, :q)' } : {}),
        ExpressionAttributeValues: { ':pk': partition, ...(needle ? { ':q': needle } : {}) },
        ScanIndexForward: false,
        ExclusiveStartKey: start,
        Limit: SEARCH_QUERY_PAGE,
      }),
    );
    matches.push(...(result.Items ?? []));
    read += result.ScannedCount ?? 0;
    start = result.LastEvaluatedKey;
    if (!start) {
      exhausted = true;
      break;
    }
    if (read >= SEARCH_READ_BUDGET) break;
  }
  const position = (item: Record<string, unknown>) =>
    encodeCursor(key, list, Object.fromEntries(GSI4_KEY_ATTRIBUTES.map((name) => [name, item[name]])));
  const page = matches.slice(0, options.limit);
  const records = page.map((item) => fromItem(item) as MarkupRecord);
  if (matches.length > options.limit) return { items: records, hasMore: true, nextCursor: position(page.at(-1)!) };
  if (!exhausted && start) return { items: records, hasMore: true, nextCursor: position(start) };
  return { items: records, hasMore: false, nextCursor: null };
}

function decodeSearchCursor(key: Buffer, list: string, cursor: string, partition: string): Record<string, string> {
  const position = decodeCursor(key, list, cursor, 'before');
  const valid = GSI4_KEY_ATTRIBUTES.every((name) => typeof position[name] === 'string') && position.GSI4PK === partition;
  if (!valid) throw new BadRequestError('before is not a valid cursor for this search.', 'invalid-cursor');
  return position as Record<string, string>;
}
