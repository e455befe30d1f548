import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import type { AttemptResult } from '../../shared/domain/webhooks/retries.js';
import { pinAddress, UnsafeUrlError, type AddressPolicy, type Resolve } from '../../shared/render/url-safety.js';

/** The whole attempt, connection to last byte read: Standard Webhooks' receivers answer quickly. */
export const ATTEMPT_TIMEOUT_MS = 15_000;
/** How much of a response is read (and discarded): the status is all that counts. */
const RESPONSE_CAP_BYTES = 64 * 1024;

/**
 * POSTs `body` to `url` once and answers the status or why none came. The host is resolved once and
 * every address checked against `allowed` (no private, loopback, link-local or metadata address
 * deployed), and the connection goes to the checked address, so DNS rebinding cannot redirect it.
 * Redirects are not followed (a 3xx is the result); the whole attempt is cut at `timeoutMs`.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowed: AddressPolicy; timeoutMs?: number; resolve?: Resolve },
): Promise<AttemptResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { error: 'invalid url' };
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return { error: `unsupported protocol ${target.protocol}` };
  // The cut covers the DNS answer too: a stalling name server must not stretch an attempt past it.
  const deadline = Date.now() + (options.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
  let address: string;
  let dnsTimer: NodeJS.Timeout | undefined;
  try {
    const timedOut = new Promise<never>((_resolve, reject) => {
      dnsTimer = setTimeout(() => reject(new DnsTimeout()), Math.max(0, deadline - Date.now()));
    });
    address = await Promise.race([pinAddress(target.hostname, options.allowed, options.resolve), timedOut]);
  } catch (error) {
    if (error instanceof DnsTimeout) return { error: 'timeout' };
    return { error: error instanceof UnsafeUrlError ? error.message : `dns: ${String(error)}` };
  } finally {
    clearTimeout(dnsTimer);
  }
  const family = isIP(address) === 6 ? 6 : 4;
  const pinned: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else callback(null, address, family);
  };
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const request = send(
      target,
      {
        method: 'POST',
        lookup: pinned,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'review-board-webhooks/1' },
      },
      (response: IncomingMessage) => {
        let read = 0;
        const statusCode = response.statusCode ?? 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= RESPONSE_CAP_BYTES) finish({ statusCode });
        });
        response.on('end', () => finish({ statusCode }));
        response.on('error', () => finish({ statusCode }));
      },
    );
    const timer = setTimeout(() => finish({ error: 'timeout' }), Math.max(0, deadline - Date.now()));
    request.on('error', (error: NodeJS.ErrnoException) => finish({ error: `connection: ${error.code ?? error.message}` }));
    request.end(body);
  });
}

class DnsTimeout extends Error {}
