import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getS3 } from '../../shared/clients.js';
import { ConversionError } from '../../shared/convert/errors.js';
import { CONVERSION_LIMITS } from '../../shared/convert/limits.js';
import type { StoredFile } from '../../shared/domain/markups/objects.js';
import { getConfig } from '../../shared/config.js';
import { markupObjectPrefix } from '../../shared/storage/objects.js';

function bucketName(): string {
  const bucket = getConfig().bucketName;
  if (!bucket) throw new Error('BUCKET_NAME is not set: this function was not granted the bucket.');
  return bucket;
}

/**
 * Where the conversion outputs of a markup live: fixed names, so a retried job overwrites its own,
 * all under the markup's prefix, which its deletion empties.
 */
export const conversionKeys = {
  pages: (markupId: string) => `${markupObjectPrefix(markupId)}pages/`,
  page: (markupId: string, number: number, extension: string) => `${markupObjectPrefix(markupId)}pages/${number}.${extension}`,
  video: (markupId: string) => `${markupObjectPrefix(markupId)}video.mp4`,
  poster: (markupId: string) => `${markupObjectPrefix(markupId)}poster.jpg`,
  thumbnail: (markupId: string) => `${markupObjectPrefix(markupId)}thumbnail.png`,
};

/**
 * Streams an uploaded object to a local file (a video may be far larger than the memory the worker
 * has). A missing object is the file's fault, not the worker's: it is a ConversionError.
 */
export async function downloadObject(key: string, path: string): Promise<void> {
  let body: Readable;
  try {
    const object = await getS3().send(new GetObjectCommand({ Bucket: bucketName(), Key: key }));
    body = object.Body as Readable;
  } catch (error) {
    if (error instanceof NoSuchKey || (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404)) {
      throw new ConversionError('The uploaded file is no longer in storage; upload it again.');
    }
    throw error;
  }
  await pipeline(body, createWriteStream(path));
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('base64');
}

/**
 * The objects one conversion run has stored, so a run that ends without a markup to show them can
 * remove them. Their total size is bounded: the object that would pass `maxBytes` is refused (a
 * ConversionError) before it is uploaded.
 */
export class OutputObjects {
  readonly keys: string[] = [];
  private readonly sizes = new Map<string, number>();
  private readonly maxBytes: number;

  constructor(options: { maxBytes?: number } = {}) {
    this.maxBytes = options.maxBytes ?? CONVERSION_LIMITS.maxOutputBytes;
  }

  /**
   * Whatever a run of the markup's conversion may have stored (its fixed keys, and every page
   * image), for a run that died before it could say: the dead-letter consumer removes them.
   */
  static async ofMarkup(markupId: string): Promise<OutputObjects> {
    const outputs = new OutputObjects();
    const fixed = [conversionKeys.video(markupId), conversionKeys.poster(markupId), conversionKeys.thumbnail(markupId)];
    outputs.keys.push(...fixed);
    let token: string | undefined;
    do {
      const listed = await getS3().send(
        new ListObjectsV2Command({ Bucket: bucketName(), Prefix: conversionKeys.pages(markupId), ContinuationToken: token }),
      );
      outputs.keys.push(...(listed.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : [])));
      token = listed.NextContinuationToken;
    } while (token);
    return outputs;
  }

  /** Stores bytes or a local file under `key` and describes it as a StoredFile. */
  async put(key: string, body: Buffer | string, mimeType: string, filename?: string): Promise<StoredFile> {
    const filesize = typeof body === 'string' ? (await stat(body)).size : body.length;
    const total = [...this.sizes].reduce((sum, [stored, size]) => sum + (stored === key ? 0 : size), filesize);
    if (total > this.maxBytes) {
      throw new ConversionError(
        `The converted files would take more than ${spokenBytes(this.maxBytes)}; at most ${spokenBytes(this.maxBytes)} are stored per markup.`,
      );
    }
    await getS3().send(
      new PutObjectCommand({
        Bucket: bucketName(),
        Key: key,
        Body: typeof body === 'string' ? createReadStream(body) : body,
        ContentLength: filesize,
        ContentType: mimeType,
        CacheControl: 'max-age=86400',
        // A file goes up as a plain stream with its checksum computed beforehand: otherwise the SDK
        // sends streams aws-chunked with a trailing checksum, which the local S3 emulator stores
        // verbatim. S3 verifies the precomputed checksum all the same.
        ...(typeof body === 'string' ? { ChecksumSHA256: await sha256Of(body) } : {}),
      }),
    );
    if (!this.keys.includes(key)) this.keys.push(key);
    this.sizes.set(key, filesize);
    return { key, mimeType, filesize, ...(filename ? { filename } : {}) };
  }

  /** Deletes everything this run stored, 1000 keys per request. */
  async deleteAll(): Promise<void> {
    for (let i = 0; i < this.keys.length; i += 1000) {
      const batch = this.keys.slice(i, i + 1000);
      await getS3().send(
        new DeleteObjectsCommand({ Bucket: bucketName(), Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
    }
    this.keys.length = 0;
    this.sizes.clear();
  }
}

const spokenBytes = (bytes: number) =>
  bytes >= 1024 ** 3 ? `${Number((bytes / 1024 ** 3).toFixed(1))} GiB` : `${bytes.toLocaleString('en-US')} bytes`;
