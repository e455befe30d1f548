import { PreconditionFailedError } from '../../errors.js';

/**
 * Optimistic concurrency on a record's `version` (every write of the record moves it): an
 * operation may be asked to change a record only at the versions its caller last read (HTTP
 * carries them as ETags in `If-Match`: `shared/http/etag.ts`).
 */

/** What an `If-Match` header asks for: any current version (`*`), or one of the listed ones. */
export type IfMatch = { any: true } | { any: false; versions: number[] };

/**
 * Checks a record's `version` as read against the request's `If-Match` (none: nothing to check).
 * The write that follows must carry the same version in its condition, so a change landing between
 * this read and the write also answers 412.
 */
export function requireVersion(ifMatch: IfMatch | undefined, version: number, subject: string): void {
  if (ifMatch && !ifMatch.any && !ifMatch.versions.includes(version)) throw staleVersion(subject);
}

/** The 412 of a conditional write whose version condition failed, or of a stale `If-Match`. */
export function staleVersion(subject: string): PreconditionFailedError {
  return new PreconditionFailedError(
    `${subject} changed since the ETag in If-Match was read; read it again (GET) and retry with its new ETag.`,
  );
}
