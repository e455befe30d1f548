import type { MarkupImageRecord, MarkupRecord, MarkupType, StoredFile } from '../../db/items.js';
import { storageMove, type StorageCategory } from '../../db/storage.js';
import { toOriginalItem, type OriginalRecord } from '../../db/originals.js';
import { putNew, type TransactItem } from '../../db/core/transact.js';
import { BadRequestError } from '../../errors.js';
import { fileTypeOf, type FileKind } from '../../storage/file-types.js';
import { markupBase } from './create.js';
import type { Placement } from './placement.js';

/**
 * Markups made from files (POST /markups/from-files and POST /markups/file), Markups rules 2-6:
 * several displayable images become one image markup, one page per image in the given order,
 * ready at once and showing the files as uploaded; one PDF, one video or one image needing
 * conversion (TIFF, PSD, EPS) becomes a markup of its type that is not ready until the conversion
 * worker has made its pages, images or web video from `source`.
 */

/** A file a markup is made from: a confirmed upload, or the bytes of POST /markups/file. */
export interface SourceFile {
  fileId: string;
  key: string;
  filename: string;
  /** The canonical mime type of its kind (the stored content type may be generic). */
  mimeType: string;
  filesize: number;
  kind: FileKind;
  width?: number;
  height?: number;
}

const KIND_WORDS: Record<Exclude<FileKind, 'image'>, string> = {
  pdf: 'a PDF',
  video: 'a video',
  'convertible-image': 'an image needing conversion (tiff, psd, eps)',
};

/** A file's kind, or a 400 naming it when no markup can be made from it. */
export function sourceOf(fields: Omit<SourceFile, 'kind' | 'mimeType'> & { contentType: string }): SourceFile {
  const type = fileTypeOf(fields.contentType, fields.filename);
  if (!type) {
    throw new BadRequestError(
      `No markup can be made from file ${fields.fileId} ("${fields.filename}", ${fields.contentType}): use images (png, jpeg, gif, bmp, webp, svg), a PDF, ` +
        'a video (mp4, mov, webm, avi, wmv, mkv, mxf) or a tiff, psd or eps image.',
      'unsupported-file-type',
    );
  }
  const { contentType: _contentType, ...rest } = fields;
  return { ...rest, kind: type.kind, mimeType: type.mimeType };
}

/**
 * Markups rules 3 and 4: any number of displayable images, or exactly one file of another kind.
 * Returns the markup type the files make.
 */
export function markupTypeOf(files: readonly SourceFile[]): MarkupType {
  const converted = files.filter((file) => file.kind !== 'image');
  if (converted.length === 0) return 'image';
  if (converted.length > 1) {
    throw new BadRequestError(
      `A markup is made from one PDF, one video or one image needing conversion; this request has ${converted.length} (${converted.map((file) => file.fileId).join(', ')}).`,
      'several-converted-files',
    );
  }
  const only = converted[0]!;
  if (files.length > 1) {
    throw new BadRequestError(
      `File ${only.fileId} is ${KIND_WORDS[only.kind as Exclude<FileKind, 'image'>]}, which makes a markup on its own; it cannot be mixed with other files.`,
      'files-mixed',
    );
  }
  return only.kind === 'pdf' ? 'pdf' : only.kind === 'video' ? 'video' : 'image';
}

/** The default markup name: the first file's name without its extension (Markups table). */
export function defaultNameOf(filename: string): string {
  const stem = filename.replace(/\.[^.]*$/, '').trim();
  return (stem || filename.trim() || 'Untitled').slice(0, 200);
}

const storedFile = (file: SourceFile): StoredFile => ({
  key: file.key,
  mimeType: file.mimeType,
  filesize: file.filesize,
  filename: file.filename,
});

/** A new file markup record (the file counterpart of `newWebpageMarkupRecord`). */
export function newFileMarkupRecord(fields: {
  placement: Pick<Placement, 'workspace' | 'parent'>;
  files: readonly SourceFile[];
  name?: string;
  createdBy: string;
  at: number;
  id?: string;
}): MarkupRecord {
  const type = markupTypeOf(fields.files);
  const first = fields.files[0]!;
  const displayable = first.kind === 'image';
  const images: MarkupImageRecord[] | undefined = displayable
    ? fields.files.map((file) => ({
        id: file.fileId,
        ...storedFile(file),
        ...(file.width !== undefined && file.height !== undefined ? { width: file.width, height: file.height } : {}),
      }))
    : type === 'image'
      ? []
      : undefined;
  return {
    ...markupBase({
      placement: fields.placement,
      name: fields.name ?? defaultNameOf(first.filename),
      createdBy: fields.createdBy,
      at: fields.at,
      id: fields.id,
    }),
    type,
    // Markups rule 5: displayable images are shown as uploaded; everything else waits for conversion.
    isReady: displayable,
    // No page to render: the view takes the first image, page or poster as the thumbnail.
    thumbnailState: 'unavailable',
    ...(images ? { images } : {}),
    ...(displayable ? {} : { source: storedFile(first), conversionStatus: 'pending' as const }),
    ...(first.kind === 'convertible-image' ? { originalMimeType: first.mimeType } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Originals
// ---------------------------------------------------------------------------------------------

/**
 * A converted markup keeps its source as its original, retained at first under every policy:
 * NEVER_STORE archives it once conversion is done, STORE_ALWAYS and ASK_PER_PROJECT keep it until
 * someone archives it. `retainOriginal` records only an explicit choice for this markup (PATCH
 * original), which survives NEVER_STORE, including its applyToExisting (Workspaces rule 2).
 */
export function withOriginalPolicy(record: MarkupRecord): MarkupRecord {
  if (!record.source) return record;
  return { ...record, hasRetainedOriginal: true, retainOriginal: false };
}

/** The retained original of a converted markup: its `source`, still counted in the organization's storage. */
export function originalOf(record: MarkupRecord): OriginalRecord {
  const source = record.source!;
  return {
    markupId: record.id,
    workspaceId: record.workspaceId,
    organizationId: record.organizationId,
    key: source.key,
    filename: source.filename ?? source.key.split('/').at(-1)!,
    mimeType: source.mimeType,
    filesize: source.filesize,
    state: 'retained',
  };
}

/** The original's record and the move of its bytes to `originals`, for the creation transaction. */
export function originalItems(record: MarkupRecord, uploadCategory: StorageCategory | undefined): TransactItem[] {
  if (!record.source) return [];
  const original = originalOf(record);
  const items: TransactItem[] = [putNew(toOriginalItem(original))];
  if (uploadCategory && uploadCategory !== 'originals') {
    items.push({ Update: storageMove(record.organizationId, uploadCategory, 'originals', original.filesize) });
  }
  return items;
}
