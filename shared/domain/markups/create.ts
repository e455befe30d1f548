import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { eventItems, type NewEvent } from '../../db/events.js';
import { getItems, toItem, type FolderRecord, type MarkupRecord } from '../../db/items.js';
import { MAX_TRANSACTION_ITEMS, takesItemsCheck } from '../../db/item-writes.js';
import { pendingPageScreenshots, settlePendingPageScreenshots } from '../../db/page-screenshots.js';
import { setThumbnail } from '../../db/thumbnails.js';
import { bestEffort, putNew, type TransactItem } from '../../db/core/transact.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { enqueueThumbnail } from '../../events/jobs.js';
import { logger } from '../../logger.js';
import { recordMetrics } from '../../metrics.js';
import { createWithAllowance } from './allowance.js';
import type { WorkspaceAccess } from './access.js';
import { recordActivity } from './activity.js';
import { resolvePlacements, type Placement } from './placement.js';
import { VIEW_MODES } from './view-modes.js';

/** Extensions of the file types the service turns into markups (Markups rules 3 and 4). */
const FILE_EXTENSIONS: Record<string, 'image' | 'pdf' | 'video' | 'convertible-image'> = {
  png: 'image',
  jpg: 'image',
  jpeg: 'image',
  gif: 'image',
  bmp: 'image',
  webp: 'image',
  svg: 'image',
  pdf: 'pdf',
  mp4: 'video',
  mov: 'video',
  webm: 'video',
  avi: 'video',
  wmv: 'video',
  mkv: 'video',
  mxf: 'video',
  tif: 'convertible-image',
  tiff: 'convertible-image',
  psd: 'convertible-image',
  eps: 'convertible-image',
};

/**
 * The supported file type a URL points at, judged by the extension of its path, or undefined for
 * a webpage. Markups rule 1 accepts both; until fetching remote files lands, a file URL also
 * becomes a webpage markup showing that address, which is what a browser would show.
 */
export function fileTypeOfUrl(url: string): (typeof FILE_EXTENSIONS)[string] | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(url).pathname)?.[1]?.toLowerCase();
  return extension !== undefined && Object.hasOwn(FILE_EXTENSIONS, extension) ? FILE_EXTENSIONS[extension] : undefined;
}

/** The default markup name of a URL: its hostname (Markups table, POST /markups/url). */
export function defaultNameOf(url: string): string {
  return new URL(url).hostname || url;
}

export interface UrlMarkupInput {
  url: string;
  name?: string;
  workspaceId?: string;
  parentFolderId?: string;
}

export function newWebpageMarkupRecord(fields: {
  placement: Pick<Placement, 'workspace' | 'parent'>;
  url: string;
  name?: string;
  createdBy: string;
  at: number;
  id?: string;
  installationId?: string;
}): MarkupRecord {
  return {
    ...markupBase({
      placement: fields.placement,
      name: fields.name ?? defaultNameOf(fields.url),
      createdBy: fields.createdBy,
      at: fields.at,
      id: fields.id,
    }),
    type: 'webpage',
    url: fields.url,
    ...(fields.installationId ? { installationId: fields.installationId } : {}),
    // A webpage needs no conversion; its thumbnail is rendered later by the thumbnail job.
    isReady: true,
    thumbnailState: 'pending',
    // Each view mode's full-page screenshot, rendered after the thumbnail (render-page-screenshot jobs).
    pageScreenshots: pendingPageScreenshots(VIEW_MODES.map((mode) => mode.id)),
  };
}

/** The fields every new markup starts with, whatever it is made from. */
export function markupBase(fields: {
  placement: Pick<Placement, 'workspace' | 'parent'>;
  name: string;
  createdBy: string;
  at: number;
  id?: string;
}): Omit<MarkupRecord, 'type' | 'isReady' | 'thumbnailState'> {
  const { workspace, parent } = fields.placement;
  return {
    kind: 'markup',
    id: fields.id ?? randomUUID(),
    workspaceId: workspace.id,
    organizationId: workspace.organizationId,
    parentFolderId: parent.id,
    name: fields.name,
    createdAt: fields.at,
    modifiedAt: fields.at,
    activityAt: fields.at,
    readOnly: false,
    status: 'editing',
    note: { id: randomUUID(), note: '', showNoteOnProjectOpen: false },
    retainOriginal: false,
    hasRetainedOriginal: false,
    activeThreads: 0,
    createdBy: fields.createdBy,
  };
}

/** What a caller creating URL markups for something else (an installation) adds to their creation. */
export interface UrlMarkupOptions {
  /** Recorded on each markup: the installation it was created for. */
  installationId?: string;
  /** Records committed in the same transaction as the markups and their charge, built from the new markups. */
  alsoWrite?: (records: readonly MarkupRecord[]) => TransactItem[];
}

/**
 * Creates one webpage markup per input, all in one workspace, in ONE transaction with the usage
 * charge and `options.alsoWrite`: either every markup (and what came with it) exists and is
 * counted, or (402, 409) nothing was written. Inputs get consecutive creation times, so the
 * newest-first list shows a batch in reverse input order.
 */
export async function createUrlMarkups(
  principal: Principal,
  inputs: readonly UrlMarkupInput[],
  options: UrlMarkupOptions = {},
): Promise<{ records: MarkupRecord[]; access: WorkspaceAccess }> {
  const placements = await resolvePlacements(principal, inputs);
  const first = placements[0];
  if (!first) throw new BadRequestError('At least one markup is needed.');
  if (placements.some((placement) => placement.workspace.id !== first.workspace.id)) {
    throw new BadRequestError('All markups of one request must be created in the same workspace.', 'several-workspaces');
  }
  const at = Date.now();
  const records = inputs.map((input, index) =>
    newWebpageMarkupRecord({
      placement: placements[index]!,
      url: input.url,
      name: input.name,
      createdBy: principal.userId,
      at: at + index,
      installationId: options.installationId,
    }),
  );
  const parents = [...new Map(placements.map((placement) => [placement.parent.id, placement.parent])).values()];
  const written = [
    ...records.map((record) => putNew(toItem(record))),
    ...markupCreatedEvents(records),
    ...(options.alsoWrite?.(records) ?? []),
  ];
  await createWithAllowance(first.workspace.id, first.workspace.organizationId, records.length, written, {
    plan: first.plan,
    guards: await intoFolders(parents, written.length),
  });
  recordMarkupsCreated(records);
  await Promise.all([
    ...records.map(scheduleThumbnail),
    recordActivity(first.workspace.id, [...new Map(placements.map((placement) => [placement.parent.id, placement.parent])).values()], at),
  ]);
  return { records, access: first };
}

/**
 * The guards of a creation into `folders`: each must still exist and not be being deleted when the
 * markups commit (a markup created into a folder read just before its deletion would be left without one).
 */
export async function intoFolders(
  folders: readonly FolderRecord[],
  otherItems: number,
): Promise<{ items: TransactItem[]; refused: () => Error }> {
  // The root and archive folders are never deleted on their own; the others are checked in the creating transaction
  // while it has room (the markups, their events, the usage counters), else read first, consistently.
  const ordinary = folders.filter((folder) => folder.role === 'folder');
  const refused = () =>
    new NotFoundError(
      `Folder ${ordinary.map((folder) => folder.id).join(' or ')} no longer exists or is being deleted: create the markup in another folder.`,
    );
  if (otherItems + ordinary.length + USAGE_COUNTERS <= MAX_TRANSACTION_ITEMS) {
    return { items: ordinary.map((folder): TransactItem => ({ ConditionCheck: takesItemsCheck(folder) })), refused };
  }
  const read = await getItems(
    ordinary.map((folder) => folder.id),
    true,
  );
  if (read.length < ordinary.length || read.some((item) => item.kind !== 'folder' || item.deletingSince !== undefined)) throw refused();
  return { items: [], refused };
}

/** The counters a creation moves beside its records: the month's usage, and the bundle when it draws on it. */
const USAGE_COUNTERS = 2;

/**
 * Asks the thumbnail renderer for a picture of the page. The markup exists already; if the job
 * cannot even be queued, the thumbnail is marked unavailable so it never stays `pending`.
 */
async function scheduleThumbnail(record: MarkupRecord): Promise<void> {
  try {
    await enqueueThumbnail({ type: 'render-thumbnail', markupId: record.id });
  } catch (error) {
    logger.error('thumbnail not scheduled', { markupId: record.id, error });
    await bestEffort('page screenshot state', () =>
      settlePendingPageScreenshots(
        record.id,
        VIEW_MODES.map((mode) => mode.id),
        'The page could not be scheduled for rendering.',
      ),
    );
    await bestEffort('thumbnail state', () =>
      setThumbnail(record.id, { state: 'unavailable', error: 'The thumbnail could not be scheduled.' }),
    );
  }
}

/** Counts markups the caller's transaction created: in all, and by type. */
export function recordMarkupsCreated(records: readonly MarkupRecord[]): void {
  recordMetrics({ MarkupsCreated: records.length });
  const byType = new Map<string, number>();
  for (const record of records) byType.set(record.type, (byType.get(record.type) ?? 0) + 1);
  for (const [markupType, count] of byType) recordMetrics({ MarkupsCreated: count }, { markupType });
}

/**
 * The `markup_created` outbox items of new markups of one workspace, for the transaction that
 * creates them: the events exist exactly when the markups do. The actor is each markup's creator
 * (`createdBy`, the principal's User id).
 */
export function markupCreatedEvents(records: readonly MarkupRecord[]): TransactItem[] {
  return eventItems(
    records.map((record): NewEvent => ({
      type: 'markup_created',
      workspaceId: record.workspaceId,
      markupId: record.id,
      userId: record.createdBy,
    })),
  );
}
