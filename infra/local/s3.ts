import { mkdirSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { S3Event } from 'aws-lambda';
import S3rver from 's3rver';
import { startS3Front } from './s3-front.js';
import { bucketCorsXml } from '../../shared/storage/bucket-cors.js';

export interface LocalS3 {
  /** The front's address: the S3 endpoint every client and every presigned POST uses. */
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * s3rver stores the objects; our front before it refuses what S3 refuses (unsigned or mis-signed
 * requests, presigned-POST policy violations, with the form judged before its file is read), stores
 * tagging s3rver ignores, and emits ObjectCreated notifications shaped like AWS's (s3rver ignores
 * policies and leaves keys unencoded in its own events, so those are not used).
 */
export async function startLocalS3(options: {
  directory: string;
  bucket: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  onObjectCreated: (event: S3Event) => Promise<void>;
}): Promise<LocalS3> {
  mkdirSync(options.directory, { recursive: true });
  const store = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    // Requests reach s3rver through the front, signed for the front's address; the front is where
    // presigned POSTs are verified.
    allowMismatchedSignatures: true,
    directory: options.directory,
    // The deployed bucket's CORS rule (any origin, as the data stack's default), so the review app
    // can post upload forms here and read the answer's ETag.
    configureBuckets: [{ name: options.bucket, configs: [bucketCorsXml(['*'])] }],
  });
  keepDirectoriesOnDelete(store);
  replaceObjectsWhole(store);
  const address = (await store.run()) as AddressInfo;
  const front = await startS3Front({
    port: 0,
    upstreamEndpoint: `http://127.0.0.1:${address.port}`,
    region: options.region,
    credentials: options.credentials,
    onObjectCreated: options.onObjectCreated,
  });
  return {
    endpoint: front.url,
    stop: async () => {
      await front.close();
      await store.close();
    },
  };
}

/** The part of s3rver's filesystem store (`store.store`, untyped) that `keepDirectoriesOnDelete` and `replaceObjectsWhole` replace. */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
  putObject(object: { bucket: string; key: string }): Promise<unknown>;
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<unknown>;
  getMetadata(bucket: string, key: string): Promise<Record<string, unknown>>;
}

/** s3rver's object model (CommonJS, untyped): what its getObject answers. */
const S3Object = createRequire(import.meta.url)('s3rver/lib/models/object') as new (
  bucket: string,
  key: string,
  content: NodeJS.ReadableStream | null,
  metadata: Record<string, unknown>,
) => { range?: { start: number; end: number } };

/** The files s3rver keeps for one object, renamed into place in this order (the content last). */
const OBJECT_FILES = ['object.md5', 'metadata.json', 'object'];

/**
 * S3 replaces an object whole: a GET during a PutObject over it answers the old object or the new
 * one. s3rver truncates the object's file and then writes it, so a GET meanwhile read an empty or
 * partial body (a page layout rewritten by the locate worker answered a JSON parse failure while a
 * reader polled it). Here s3rver writes the object's files beside the real ones (its own putObject,
 * with paths that end `.<id>.partial`, which its listings ignore) and they are renamed into place,
 * each at once; a read already streaming keeps the file it opened.
 */
function replaceObjectsWhole(server: S3rver): void {
  const files = (server as unknown as { store: FilesystemStore }).store;
  const putObject = files.putObject;
  files.putObject = async (object) => {
    const id = randomUUID();
    const staged = Object.create(files, {
      getResourcePath: {
        value: (bucket: string, key: string, resource: string) => `${files.getResourcePath(bucket, key, resource)}.${id}.partial`,
      },
    }) as FilesystemStore;
    const stored = await putObject.call(staged, object);
    for (const resource of OBJECT_FILES) {
      await rename(staged.getResourcePath(object.bucket, object.key, resource), files.getResourcePath(object.bucket, object.key, resource));
    }
    return stored;
  };
  // s3rver's getObject takes the length from one look at the path and then opens it: a rename
  // between the two sent the new content cut to the old length. This one opens the file first and
  // answers its length and bytes from what it opened.
  files.getObject = async (bucket, key, options) => {
    let handle: FileHandle;
    try {
      handle = await open(files.getResourcePath(bucket, key, 'object'), 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const stat = await handle.stat();
      const metadata = {
        ...(await files.getMetadata(bucket, key)),
        'content-length': stat.size,
        'last-modified': stat.mtime.toUTCString(),
      };
      const lastByte = Math.max(0, stat.size - 1);
      const range = { start: options?.start ?? 0, end: Math.min(options?.end ?? Infinity, lastByte) };
      const ranged = options !== undefined && (options.start !== undefined || Boolean(options.end));
      const satisfiable = range.start >= 0 && range.start <= range.end;
      const object = new S3Object(
        bucket,
        key,
        satisfiable ? handle.createReadStream({ start: range.start, end: range.end }) : null,
        metadata,
      );
      if (!satisfiable) await handle.close();
      if (ranged) object.range = range;
      return object;
    } catch (error) {
      await handle.close();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  };
}

/**
 * s3rver removes a key's directories as soon as they are empty, which races with a PutObject into
 * the same directory: its mkdirp, then its open fails with ENOENT on a write stream nothing listens
 * to, and the whole local stack dies. Deleting a markup's prefix while its conversion still writes
 * pages does exactly that (S3 has no directories), so the local stack deletes an object's files and
 * keeps its directories; an empty one lists nothing.
 */
function keepDirectoriesOnDelete(server: S3rver): void {
  const files = (server as unknown as { store: FilesystemStore }).store;
  files.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        unlink(files.getResourcePath(bucket, key, resource)).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        }),
      ),
    );
  };
}
