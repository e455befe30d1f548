/**
 * Local S3 front: an HTTP server that sits before s3rver so the local stack
 * behaves like AWS S3 where s3rver does not.
 *
 * s3rver accepts any browser form POST without looking at its policy, so a
 * client bug in presigned-POST handling (a wrong Content-Type, a missing
 * metadata field, a file of the wrong size) would only surface once deployed.
 * It also emits event notifications with raw keys and an eventVersion of 2.0,
 * unlike AWS. s3rver runs with allowMismatchedSignatures (the front rewrites
 * Host), so it would also take unsigned requests. This front verifies POST
 * policies and every other request's SigV4 signature as S3 does (only CORS
 * preflights go unsigned), streams accepted uploads into s3rver, applies the
 * tagging s3rver ignores, and emits AWS-shaped ObjectCreated events itself.
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import type { S3Event } from 'aws-lambda';
import { logError, refuse, S3ErrorResponse, sendError } from './s3-errors.js';
import { handleFormPost } from './s3-form-upload.js';
import { proxy, type FrontContext } from './s3-proxy.js';
import { verifyRequestSignature } from './s3-sigv4.js';

export interface S3FrontOptions {
  /** 0 = ephemeral; read the bound port from the returned {@link S3Front}. */
  port: number;
  /** Defaults to 127.0.0.1 so the emulator is never exposed beyond the machine by accident. */
  host?: string;
  /** s3rver base URL, e.g. http://127.0.0.1:4569. */
  upstreamEndpoint: string;
  region: string;
  /** The only key pair presigned POST policies are accepted for, and the one used to talk to s3rver. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** Called after the HTTP response, like S3's asynchronous notifications; failures are logged, never surfaced. */
  onObjectCreated?: (event: S3Event) => void | Promise<void>;
}

export interface S3Front {
  url: string;
  port: number;
  /** Stops accepting connections and waits for in-flight notifications, so tests can assert on them. */
  close(): Promise<void>;
}

/**
 * Starts the front. It does not start s3rver: the caller owns the emulator's
 * lifecycle, its buckets, and its data directory.
 */
export async function startS3Front(options: S3FrontOptions): Promise<S3Front> {
  const host = options.host ?? '127.0.0.1';
  const upstream = new URL(options.upstreamEndpoint);
  if (upstream.protocol !== 'http:') {
    throw new Error(`s3-front only proxies to http:// upstreams, got ${options.upstreamEndpoint}`);
  }
  const agent = new Agent({ keepAlive: true });
  const s3 = new S3Client({
    endpoint: options.upstreamEndpoint,
    forcePathStyle: true,
    region: options.region,
    credentials: options.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const pending = new Set<Promise<void>>();

  const notify = (build: () => Promise<S3Event>): void => {
    const callback = options.onObjectCreated;
    if (callback === undefined) return;
    const task = (async () => {
      try {
        await callback(await build());
      } catch (error) {
        logError('s3-front: ObjectCreated notification failed', error);
      }
    })();
    pending.add(task);
    void task.finally(() => pending.delete(task));
  };

  const context: FrontContext = { options, upstream, agent, s3, notify };
  const server = createServer((req, res) => {
    handle(context, req, res).catch((error: unknown) => {
      logError('s3-front: request failed', error);
      if (!res.headersSent) {
        sendError(res, new S3ErrorResponse(500, 'InternalError', 'We encountered an internal error. Please try again.'));
      } else {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    async close() {
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      });
      await Promise.allSettled([...pending]);
      agent.destroy();
      s3.destroy();
    },
  };
}

async function handle(context: FrontContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://front.invalid');
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const isFormPost =
    req.method === 'POST' &&
    segments.length === 1 &&
    url.search === '' &&
    /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
  if (isFormPost) {
    let bucket: string;
    try {
      bucket = decodeURIComponent(segments[0] as string);
    } catch {
      refuse(req, res, new S3ErrorResponse(400, 'InvalidURI', "Couldn't parse the specified URI."));
      return;
    }
    await handleFormPost(context, req, res, bucket);
    return;
  }
  if (req.method !== 'OPTIONS') {
    try {
      verifyRequestSignature(context.options, req);
    } catch (error) {
      if (!(error instanceof S3ErrorResponse)) throw error;
      refuse(req, res, error);
      return;
    }
  }
  proxy(context, req, res, url);
}
