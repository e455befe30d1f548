import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { withBackoff } from './core/backoff.js';
import { forEachLimit } from '../concurrency.js';
import { isConditionFailure } from './core/errors.js';
import { fromItem, itemKey, workspaceMarkupsPartition, type MarkupRecord } from './items.js';
import { markupWordKeys, WORD_KEY_ATTRIBUTES } from './markup-words.js';
import { queryAll, scanMatching } from './core/paging.js';

export interface WordBackfillResult {
  /** Markups read. */
  markups: number;
  /** Markups whose word keys were written. */
  indexed: number;
  /** Markups whose keys were already those of their name and URL. */
  alreadyIndexed: number;
  /** Markups deleted between the read and the write. */
  gone: number;
  /** Writes that found the markup changed (renamed, moved) and read it again. */
  retries: number;
}

/**
 * `admin search backfill`: gives markups written before the word index (or partly indexed by a
 * rename before this ran) their word keys. Idempotent: a markup whose stored keys are already
 * those of its name and URL is not written. Safe beside traffic: each write is conditional on the
 * name, URL, workspace and creation time it was computed from, so it never puts an older name's
 * words over a rename (the markup is read again and computed anew), and never makes a deleted
 * markup reappear (`attribute_exists`). A workspace's markups are a Query of GSI4; every markup a Scan.
 */
export async function backfillMarkupWords(options: { workspaceId?: string } = {}): Promise<WordBackfillResult> {
  const result: WordBackfillResult = { markups: 0, indexed: 0, alreadyIndexed: 0, gone: 0, retries: 0 };
  const items = options.workspaceId
    ? queryAll('GSI4', workspaceMarkupsPartition(options.workspaceId))
    : scanMatching({ expression: '#entity = :markup', names: { '#entity': 'entity' }, values: { ':markup': 'Markup' } });
  let batch: Record<string, unknown>[] = [];
  const flush = async () => {
    await forEachLimit(batch, 8, (item) => indexOne(item, result));
    batch = [];
  };
  for await (const item of items) {
    result.markups += 1;
    batch.push(item);
    if (batch.length >= 200) await flush();
  }
  await flush();
  return result;
}

const sameKeys = (item: Record<string, unknown>, expected: Record<string, string>) =>
  WORD_KEY_ATTRIBUTES.every((name) => item[name] === expected[name]);

async function indexOne(first: Record<string, unknown>, result: WordBackfillResult): Promise<void> {
  let item: Record<string, unknown> | undefined = first;
  const { id } = fromItem(first);
  // A write that found the markup changed reads it again and computes its keys anew, at once, up to 10 writes.
  await withBackoff(
    async (attempt) => {
      if (attempt > 0) {
        result.retries += 1;
        // The item as stored, keys and all (`getItem` leaves them out).
        item = (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: itemKey(id), ConsistentRead: true }))).Item;
        if (item?.entity !== 'Markup') {
          result.gone += 1;
          return;
        }
      }
      const markup = fromItem(item!) as MarkupRecord;
      const expected = markupWordKeys(markup);
      if (sameKeys(item!, expected)) {
        if (attempt === 0) result.alreadyIndexed += 1;
        else result.indexed += 1;
        return;
      }
      await getDb().send(new UpdateCommand(wordKeysUpdate(markup, expected)));
      result.indexed += 1;
    },
    { attempts: 10, baseMs: 0, retryOn: isConditionFailure },
  );
}

/** SET the expected word keys, REMOVE the others, while the fields they derive from are as read. */
function wordKeysUpdate(markup: MarkupRecord, expected: Record<string, string>) {
  const names: Record<string, string> = { '#pk': 'PK', '#name': 'name', '#url': 'url', '#ws': 'workspaceId', '#createdAt': 'createdAt' };
  const values: Record<string, unknown> = { ':name': markup.name, ':ws': markup.workspaceId, ':createdAt': markup.createdAt };
  const sets: string[] = [];
  const removes: string[] = [];
  WORD_KEY_ATTRIBUTES.forEach((attribute, i) => {
    names[`#k${i}`] = attribute;
    if (expected[attribute] === undefined) removes.push(`#k${i}`);
    else {
      values[`:k${i}`] = expected[attribute];
      sets.push(`#k${i} = :k${i}`);
    }
  });
  const conditions = ['attribute_exists(#pk)', '#name = :name', '#ws = :ws', '#createdAt = :createdAt'];
  if (markup.url === undefined) conditions.push('attribute_not_exists(#url)');
  else {
    values[':url'] = markup.url;
    conditions.push('#url = :url');
  }
  return {
    TableName: getConfig().tableName,
    Key: itemKey(markup.id),
    UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : ''].join(' ').trim(),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
