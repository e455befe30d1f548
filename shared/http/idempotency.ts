import { createHash } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Principal } from '../auth/principal.js';
import { AGAIN, withBackoff } from '../db/core/backoff.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from '../db/idempotency.js';
import { logger } from '../logger.js';
import { IdempotencyKeyReusedError, IdempotentRequestInProgressError, ValidationError } from '../errors.js';
import type { Reply } from './route.js';

/**
 * Idempotent creates (issue 17, item 4). A route marked `idempotent` in its route table takes an
 * `Idempotency-Key` header: the first request with a key runs; the same request again within
 * `IDEMPOTENCY_WINDOW_SECONDS` gets the first one's response replayed (`Idempotent-Replayed: true`)
 * without running the operation again (no second markup, no second charge); another request with
 * the key is a 422; one sent while the first still runs a 409. Keys belong to the caller's credential.
 * Only 2xx responses are kept: every error releases the key, since a create that answers an error
 * wrote nothing (its writes are one transaction), so a retry with the key may run anew.
 */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;
/** Lock of a request whose Lambda reported no remaining time (never on Lambda; the API Gateway integration limit). */
const DEFAULT_LOCK_MS = 30_000;

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,255}$/;

/** The request's `Idempotency-Key` (headers lower-cased), undefined when absent; a 400 when it is not 1-255 printable ASCII characters. */
export function readIdempotencyKey(headers: Record<string, string | undefined>): string | undefined {
  const value = headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  if (!PRINTABLE_ASCII.test(value)) {
    throw new ValidationError([{ pointer: '/headers/idempotency-key', detail: 'must be 1 to 255 printable ASCII characters' }]);
  }
  return value;
}

/**
 * What makes two requests "the same": method, path (with its ids), query string and the body's
 * bytes as received (base64 transport decoded), hashed with SHA-256. Raw bytes rather than a
 * canonical JSON form: a retry resends the same bytes, every route is covered alike (a multipart
 * form too, whose boundary is part of its bytes), and nothing is parsed before the caller is known.
 */
export function requestFingerprint(
  event: Pick<APIGatewayProxyEventV2, 'rawPath' | 'rawQueryString' | 'body' | 'isBase64Encoded' | 'requestContext'>,
): string {
  const hash = createHash('sha256').update(`${event.requestContext.http.method} ${event.rawPath}?${event.rawQueryString ?? ''}\n`);
  if (event.body) hash.update(Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8'));
  return hash.digest('base64url');
}

/**
 * Whose key it is: the credential (an API key id), or the user behind an exchange or session token (tokens are re-minted, the user stays).
 */
export function idempotencyScope(principal: Principal): string {
  if (principal.kind === 'session') return `MEMBER#${principal.userId}`;
  return principal.kind === 'endUser' ? `ENDUSER#${principal.userId}` : `KEY#${principal.keyId}`;
}

export interface IdempotentRequest {
  principal: Principal;
  key: string;
  fingerprint: string;
  routeKey: string;
  requestId: string;
  /** The invocation's remaining time: a holder that dies keeps the key at most this long. */
  remainingMs: number | undefined;
}

/** Runs `operation` once per key and request, or answers what the key's first request answered. */
export async function runIdempotently(request: IdempotentRequest, operation: () => Promise<Reply>): Promise<Reply> {
  const scope = idempotencyScope(request.principal);
  // A record released between our failed claim and the read of it is gone: claim again, at once,
  // up to four times in all.
  return withBackoff(
    async () => {
      const now = Date.now();
      const claim = await claimIdempotencyKey(
        scope,
        request.key,
        {
          routeKey: request.routeKey,
          fingerprint: request.fingerprint,
          token: request.requestId,
          lockedUntil: now + (request.remainingMs && request.remainingMs > 0 ? request.remainingMs : DEFAULT_LOCK_MS),
          expiresAtEpoch: Math.floor(now / 1000) + IDEMPOTENCY_WINDOW_SECONDS,
        },
        now,
      );
      if (claim.claimed) return await runHolding(scope, request, operation);
      const existing = claim.existing;
      if (!existing) return AGAIN;
      if (existing.fingerprint !== request.fingerprint) {
        throw new IdempotencyKeyReusedError(
          `This ${IDEMPOTENCY_KEY_HEADER} was used with another request (first on ${existing.routeKey} at ${existing.createdAt}): ` +
            'a key stands for one request (method, path, query and body). Send a new key for a new request.',
        );
      }
      if (existing.status === 'inProgress' || existing.reply === undefined) {
        throw new IdempotentRequestInProgressError(
          `The first request with this ${IDEMPOTENCY_KEY_HEADER} is still being processed; retry in a moment to get its response.`,
        );
      }
      const reply = JSON.parse(existing.reply) as Reply;
      return { ...reply, headers: { ...reply.headers, [REPLAYED_HEADER]: 'true' } };
    },
    {
      attempts: 4,
      baseMs: 0,
      exhausted: () =>
        new IdempotentRequestInProgressError(`A request with this ${IDEMPOTENCY_KEY_HEADER} is being processed; retry in a moment.`),
    },
  );
}

async function runHolding(scope: string, request: IdempotentRequest, operation: () => Promise<Reply>): Promise<Reply> {
  let reply: Reply;
  try {
    reply = await operation();
  } catch (error) {
    await releaseQuietly(scope, request);
    throw error;
  }
  if (reply.status >= 300 || reply.binary) {
    await releaseQuietly(scope, request);
    return reply;
  }
  try {
    const kept = await completeIdempotencyKey(
      scope,
      request.key,
      request.requestId,
      JSON.stringify({ status: reply.status, body: reply.body, headers: reply.headers }),
    );
    if (!kept)
      logger.warn('idempotency key taken over before its response was stored', {
        routeKey: request.routeKey,
        requestId: request.requestId,
      });
  } catch (error) {
    // The work is done: answer it. The key stays in progress until its lock expires, then runs anew.
    logger.error('idempotent response not stored', { routeKey: request.routeKey, requestId: request.requestId, error });
  }
  return reply;
}

/** Releases the key after a failure; a failed release only delays retries until the lock expires, so the caller's own error wins. */
async function releaseQuietly(scope: string, request: IdempotentRequest): Promise<void> {
  try {
    await releaseIdempotencyKey(scope, request.key, request.requestId);
  } catch (error) {
    logger.error('idempotency key not released', { routeKey: request.routeKey, requestId: request.requestId, error });
  }
}
