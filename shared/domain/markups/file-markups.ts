import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { eventItem } from '../../db/events.js';
import { failIfArmed } from '../../db/core/faults.js';
import { toItem, type MarkupRecord } from '../../db/items.js';
import { failPendingConversion } from '../../db/item-writes.js';
import { storageChange } from '../../db/storage.js';
import { chargeAdjustment, type ChargeRecord } from '../../db/usage.js';
import { toOriginalItem } from '../../db/originals.js';
import { putNew } from '../../db/core/transact.js';
import { consumeUploadItem, getUploads, toUploadItem, uploadObjectKey, type UploadRecord } from '../../db/uploads.js';
import { enqueueConversion } from '../../events/jobs.js';
import { BadRequestError, ConflictError, ForbiddenError } from '../../errors.js';
import { logger } from '../../logger.js';
import { IMAGE_HEADER_BYTES, readImageAs, type ImageSize } from '../../storage/image-size.js';
import { deleteObject, putObject, readObjectStart } from '../../storage/objects.js';
import { createWithAllowance } from './allowance.js';
import { newFileMarkupRecord, originalItems, originalOf, sourceOf, withOriginalPolicy, type SourceFile } from './file-markup-records.js';
import { requireDistinct, type WorkspaceAccess } from './access.js';
import { recordActivity } from './activity.js';
import { intoFolders, markupCreatedEvents, recordMarkupsCreated } from './create.js';
import { resolvePlacement, type Placement } from './placement.js';
import { MARKUP_SOURCE_TYPES, objectNameOf, requireStorageFor, storageCategoryOf } from '../uploads/rules.js';
import { withArticle } from '../../english.js';

/** Creating markups from files: from confirmed uploads (POST /markups/from-files) or from the request's bytes (POST /markups/file). */

/** Markups rule 2. */
export const MAX_FILES_PER_MARKUP = 50;

export interface FileMarkupInput {
  /** Required of organization keys; a workspace key's own workspace when left out. */
  workspaceId?: string;
  name?: string;
  parentFolderId?: string;
}

export interface CreatedFileMarkup {
  record: MarkupRecord;
  access: WorkspaceAccess;
}

// ---------------------------------------------------------------------------------------------
// POST /markups/from-files
// ---------------------------------------------------------------------------------------------

/**
 * The confirmed, unused uploads of the workspace that `fileIds` name, in their order (Markups rule
 * 6): unknown or unconfirmed files are a 400, files of another workspace a 403, files already used
 * a 400 telling the caller to upload again.
 */
async function loadSourceUploads(fileIds: readonly string[], placement: Placement): Promise<UploadRecord[]> {
  const found = new Map((await getUploads(fileIds)).map((upload) => [upload.fileId, upload]));
  const unknown = fileIds.filter((fileId) => !found.has(fileId));
  if (unknown.length > 0) {
    throw new BadRequestError(
      `These files do not exist (or their upload expired unconfirmed): ${unknown.join(', ')}. Upload them first.`,
      'unknown-file',
    );
  }
  const uploads = fileIds.map((fileId) => found.get(fileId)!);
  const foreign = uploads.filter((upload) => upload.workspaceId !== placement.workspace.id);
  if (foreign.length > 0) {
    throw new ForbiddenError(
      `These files were uploaded into another workspace than ${placement.workspace.id}: ${foreign.map((upload) => upload.fileId).join(', ')}.`,
      'file-in-another-workspace',
    );
  }
  const unconfirmed = uploads.filter((upload) => upload.state === 'issued');
  if (unconfirmed.length > 0) {
    throw new BadRequestError(
      `These uploads were never confirmed: ${unconfirmed.map((upload) => upload.fileId).join(', ')}. Call POST /uploads/upload-complete after posting each file.`,
      'file-not-confirmed',
    );
  }
  requireUnused(uploads);
  const misfiled = uploads.filter((upload) => !MARKUP_SOURCE_TYPES.has(upload.resourceType));
  if (misfiled.length > 0) {
    throw new BadRequestError(
      `These files were uploaded as ${[...new Set(misfiled.map((upload) => upload.resourceType))].join(', ')}, not markup_asset: ${misfiled.map((upload) => upload.fileId).join(', ')}.`,
      'file-not-markup-asset',
    );
  }
  return uploads;
}

function requireUnused(uploads: readonly UploadRecord[]): void {
  const used = uploads.filter((upload) => upload.state === 'consumed');
  if (used.length > 0) {
    throw new BadRequestError(
      `These files are already used by another markup: ${used.map((upload) => `${upload.fileId} (markup ${upload.consumedBy})`).join(', ')}. ` +
        'A file makes one markup; upload it again to use it again.',
      'file-already-used',
    );
  }
}

/**
 * POST /markups/from-files. The markup, the usage charge (the whole set is ONE markup) and the
 * consumption of every file (`confirmed` -> `consumed`, conditional) are one transaction, so of
 * concurrent requests naming the same file exactly one creates a markup. The files' bytes were
 * counted when they were confirmed; the organization must still be within its storage limit with
 * them (402 otherwise).
 */
export async function createMarkupFromUploads(
  principal: Principal,
  input: FileMarkupInput & { fileIds: readonly string[] },
): Promise<CreatedFileMarkup> {
  if (input.fileIds.length === 0 || input.fileIds.length > MAX_FILES_PER_MARKUP) {
    throw new BadRequestError(`fileIds must list 1 to ${MAX_FILES_PER_MARKUP} files; it lists ${input.fileIds.length}.`, 'file-count');
  }
  requireDistinct(input.fileIds, 'fileIds');
  const placement = await resolvePlacement(principal, input, { workspaceRequired: true });
  const uploads = await loadSourceUploads(input.fileIds, placement);
  const files = uploads.map((upload) =>
    sourceOf({
      fileId: upload.fileId,
      key: upload.key,
      filename: upload.filename,
      contentType: upload.contentType,
      filesize: upload.filesize,
      width: upload.width,
      height: upload.height,
    }),
  );
  await requireDecodableUploads(files);
  const at = Date.now();
  const record = withOriginalPolicy(newFileMarkupRecord({ placement, files, name: input.name, createdBy: principal.userId, at }));
  const combined = files.reduce((sum, file) => sum + file.filesize, 0);
  await requireStorageFor(
    placement.plan,
    0,
    `A markup of ${files.length === 1 ? 'one file' : `${files.length} files`} (${combined} bytes)`,
  );

  const consumedAt = new Date(at).toISOString();
  let charge: ChargeRecord;
  try {
    charge = await createWithAllowance(
      placement.workspace.id,
      placement.workspace.organizationId,
      1,
      (charged) => [
        putNew(toItem(withCharge(record, charged))),
        ...markupCreatedEvents([record]),
        ...files.map((file) => consumeUploadItem(file.fileId, record.id, consumedAt)),
        // The source of a converted markup is its original: its bytes move to `originals`.
        ...originalItems(record, uploads[0]!.category),
      ],
      { plan: placement.plan, guards: await intoFolders([placement.parent], 0) },
    );
  } catch (error) {
    // A file's condition failed: a concurrent request consumed it first.
    if (error instanceof ConflictError) requireUnused(await getUploads(input.fileIds));
    throw error;
  }
  recordMarkupsCreated([record]);
  return { record: await afterCreation(withCharge(record, charge), placement, at), access: placement };
}

/** A 400 for an image whose bytes do not decode as its declared type (DESIGN.md: bytes that are not what they claim). */
function requireDecodable(file: SourceFile, image: { size?: ImageSize } | undefined): ImageSize | undefined {
  if (!image) {
    throw new BadRequestError(
      `File ${file.fileId} ("${file.filename}") is not ${withArticle(file.mimeType)} image: its bytes do not decode as that type. Upload the image with its real content type.`,
      'file-not-decodable',
    );
  }
  return image.size;
}

/**
 * Every displayable image of a markup must decode as its declared type. Upload-complete read each
 * image's header as its type and recorded the size it found, so only an image without a size is
 * read again (an SVG may be sized by its viewer; an upload confirmed before that rule).
 */
async function requireDecodableUploads(files: readonly SourceFile[]): Promise<void> {
  const unsized = files.filter((file) => file.kind === 'image' && (file.width === undefined || file.height === undefined));
  await Promise.all(
    unsized.map(async (file) => {
      const head = await readObjectStart(file.key, IMAGE_HEADER_BYTES);
      requireDecodable(file, head && readImageAs(head, file.mimeType));
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// POST /markups/file
// ---------------------------------------------------------------------------------------------

export interface UploadedBytes {
  data: Buffer;
  filename: string;
  contentType: string;
}

/**
 * POST /markups/file: stores the bytes as an upload of the workspace, then makes the markup as
 * from-files does. The upload record is written already consumed, with its storage count, in the
 * markup's own transaction, so a refused creation (402) leaves no record and its object is removed.
 */
export async function createMarkupFromBytes(principal: Principal, input: FileMarkupInput, file: UploadedBytes): Promise<CreatedFileMarkup> {
  const placement = await resolvePlacement(principal, input, { workspaceRequired: true });
  const fileId = randomUUID();
  const key = uploadObjectKey(placement.workspace.id, fileId, objectNameOf(file.filename));
  const source = sourceOf({ fileId, key, filename: file.filename, contentType: file.contentType, filesize: file.data.length });
  const size = source.kind === 'image' ? requireDecodable(source, readImageAs(file.data, source.mimeType)) : undefined;
  const files = [{ ...source, ...size }];
  const at = Date.now();
  const record = withOriginalPolicy(newFileMarkupRecord({ placement, files, name: input.name, createdBy: principal.userId, at }));
  await requireStorageFor(placement.plan, file.data.length, `A file of ${file.data.length} bytes`);

  const stored = await putObject(key, file.data, file.contentType, { 'file-id': fileId });
  const now = new Date(at).toISOString();
  const upload: UploadRecord = {
    fileId,
    workspaceId: placement.workspace.id,
    organizationId: placement.workspace.organizationId,
    resourceType: 'markup_asset',
    resourceId: placement.parent.id,
    key,
    filename: file.filename,
    contentType: file.contentType,
    filesize: file.data.length,
    state: 'consumed',
    uploadedBy: principal.userId,
    createdAt: now,
    confirmedAt: now,
    etag: stored.etag,
    category: storageCategoryOf('markup_asset', file.contentType, file.filename),
    ...size,
    consumedAt: now,
    consumedBy: record.id,
  };
  let charge: ChargeRecord;
  try {
    charge = await createWithAllowance(
      placement.workspace.id,
      placement.workspace.organizationId,
      1,
      (charged) => [
        putNew(toItem(withCharge(record, charged))),
        putNew(toUploadItem(upload)),
        ...markupCreatedEvents([record]),
        ...(record.source ? [putNew(toOriginalItem(originalOf(record)))] : []),
        // The limit rides on the write itself, so parallel requests cannot all pass the check above.
        {
          Update: storageChange(
            upload.organizationId,
            { [record.source ? 'originals' : upload.category!]: upload.filesize },
            { limit: placement.plan.storageLimitBytes },
          ),
        },
      ],
      { plan: placement.plan, guards: await intoFolders([placement.parent], 0) },
    );
  } catch (error) {
    await deleteObject(key).catch((cleanup: unknown) =>
      logger.warn('object of a refused file markup not removed', { key, error: cleanup }),
    );
    // A failed condition of the creation is the storage limit when the file no longer fits.
    if (error instanceof ConflictError) await requireStorageFor(placement.plan, file.data.length, `A file of ${file.data.length} bytes`);
    throw error;
  }
  recordMarkupsCreated([record]);
  return { record: await afterCreation(withCharge(record, charge), placement, at), access: placement };
}

/** A markup still to be converted keeps its charge, which its failure gives back; a ready one needs none. */
const withCharge = (record: MarkupRecord, charge: ChargeRecord): MarkupRecord =>
  record.conversionStatus === 'pending' ? { ...record, charge } : record;

// ---------------------------------------------------------------------------------------------
// After the creation transaction
// ---------------------------------------------------------------------------------------------

/**
 * Records the activity and, for files that need it, queues the conversion. If
 * the job cannot be queued the markup is marked failed at once (final, `isReady` true, with the
 * reason) so it never stays pending; if the request dies before (a crash, a timeout), the
 * pending-work sweep queues it (shared/domain/markups/pending-work.ts). Returns the record as it now stands.
 */
async function afterCreation(record: MarkupRecord, placement: Placement, at: number): Promise<MarkupRecord> {
  if (record.conversionStatus === 'pending') await failIfArmed('before-work-enqueue', record.workspaceId);
  const [current] = await Promise.all([
    record.conversionStatus === 'pending' ? scheduleConversion(record) : record,
    recordActivity(placement.workspace.id, [placement.parent], at),
  ]);
  return current;
}

async function scheduleConversion(record: MarkupRecord): Promise<MarkupRecord> {
  try {
    await enqueueConversion({ type: 'convert-markup', markupId: record.id });
    return record;
  } catch (error) {
    logger.error('conversion not scheduled', { markupId: record.id, error });
    const failed: MarkupRecord = {
      ...record,
      isReady: true,
      conversionStatus: 'failed',
      conversionError: 'The conversion could not be scheduled; upload the file again to make a new markup.',
    };
    // The worker may have picked the markup up after all (the send failed late); then leave it to the worker.
    // `isReady` becomes true here as when the worker fails it, so listeners get `markup_ready` with it;
    // the creating request caused it, so its principal is the actor.
    // The creation's charge goes back with it: a markup whose conversion failed does not count (DESIGN.md).
    const ready = () => [
      eventItem({ type: 'markup_ready', workspaceId: record.workspaceId, markupId: record.id, userId: record.createdBy }),
      ...(record.charge ? chargeAdjustment(record.charge, record.organizationId, -1) : []),
    ];
    const recorded = await failPendingConversion(record, failed, ready).catch((markError: unknown) => {
      logger.error('conversion failure not recorded', { markupId: record.id, error: markError });
      return false;
    });
    return recorded ? failed : record;
  }
}
