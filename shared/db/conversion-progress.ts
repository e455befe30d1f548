import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../clients.js';
import { getConfig } from '../config.js';
import { itemKey } from './items.js';
import { TABLE } from './core/table.js';

/**
 * How far a running conversion has come, for the people waiting on it: pages of a PDF or TIFF
 * converted (of how many, when the file says), or the share of a video transcoded. One record per
 * markup beside its item (`ITEM#<id>` / `PROGRESS`), not on it: the item's writes are diffs of what
 * was read (`itemUpdate`), and a worker writing every second must not make a rename's or the final
 * `markReady`'s read stale. Only a pending markup's progress is shown; a finished or deleted
 * markup's record is left to TTL.
 */
export interface ConversionProgress {
  /** 0–100, when the total is known. */
  percent?: number;
  /** Pages (of a PDF or a multi-page TIFF) converted so far. */
  pagesConverted?: number;
  /** Pages the file has, when known before the last one is converted. */
  pageCount?: number;
}

const progressKey = (markupId: string) => ({ PK: itemKey(markupId).PK, SK: 'PROGRESS' });

/** A day covers the longest conversion many times over. */
const KEEP_SECONDS = 24 * 60 * 60;

export async function recordConversionProgress(markupId: string, progress: ConversionProgress, now = Date.now()): Promise<void> {
  await getDb().send(
    new PutCommand({
      TableName: getConfig().tableName,
      Item: {
        ...progressKey(markupId),
        entity: 'ConversionProgress',
        ...progress,
        updatedAt: now,
        [TABLE.ttlAttribute]: Math.floor(now / 1000) + KEEP_SECONDS,
      },
    }),
  );
}

export async function conversionProgressOf(markupId: string): Promise<ConversionProgress | undefined> {
  const { Item } = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: progressKey(markupId) }));
  if (!Item) return undefined;
  const { percent, pagesConverted, pageCount } = Item as ConversionProgress;
  return {
    ...(typeof percent === 'number' ? { percent } : {}),
    ...(typeof pagesConverted === 'number' ? { pagesConverted } : {}),
    ...(typeof pageCount === 'number' ? { pageCount } : {}),
  };
}
