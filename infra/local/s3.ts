import { mkdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
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

/** The part of s3rver's filesystem store (`store.store`, untyped) that `keepDirectoriesOnDelete` replaces. */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
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
