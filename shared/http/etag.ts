import { createHash } from 'node:crypto';
import type { IfMatch } from '../domain/common/versions.js';

/**
 * ETags and conditional requests (RFC 9110 section 13) on the routes a route table marks
 * `conditional`: one workspace, markup, item, thread or message. The ETag is `"<version>-<digest>"`:
 * `version` is the record's own version number, moved by every write of the record (the write that
 * an `If-Match` guards carries it in its DynamoDB condition), and `digest` a SHA-256 of the answer's
 * JSON, so it also changes with what the answer shows from other records (a markup's thread
 * counters, a thread's messages, the caller's read state). `If-None-Match` compares whole ETags
 * (weak comparison: a `W/` tag matches too), so a 304 never hides a changed body; `If-Match`
 * compares the version (strong comparison: a `W/` tag never matches), since that is what the write
 * can hold in its condition.
 */
export const ETAG_HEADER = 'ETag';
export const IF_MATCH_HEADER = 'If-Match';
export const IF_NONE_MATCH_HEADER = 'If-None-Match';

/** The ETag of an answer `body` of a record at `version`. */
export function entityTag(version: number, body: unknown): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('base64url')
    .slice(0, 22);
  return `"${version}-${digest}"`;
}

interface ListedTag {
  weak: boolean;
  opaque: string;
}

/**
 * The entity tags of an `If-Match`/`If-None-Match` value; `*` answers 'any'. Anything that is not a tag is skipped (it matches nothing).
 */
function listedTags(value: string): ListedTag[] | 'any' {
  if (value.trim() === '*') return 'any';
  return [...value.matchAll(/(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/g)].map((match) => ({ weak: match[1] !== undefined, opaque: match[2]! }));
}

/**
 * The request's `If-Match` (headers lower-cased), undefined when absent. Weak tags and tags of no version are dropped: they match nothing.
 */
export function readIfMatch(headers: Record<string, string | undefined>): IfMatch | undefined {
  const value = headers[IF_MATCH_HEADER.toLowerCase()];
  if (value === undefined) return undefined;
  const tags = listedTags(value);
  if (tags === 'any') return { any: true };
  const versions = tags.flatMap((tag) => {
    const version = /^(\d{1,15})-/.exec(tag.opaque)?.[1];
    return !tag.weak && version !== undefined ? [Number(version)] : [];
  });
  return { any: false, versions };
}

/** Whether the request's `If-None-Match` lists `etag` (weak comparison) or is `*`: the caller's copy is current. */
export function noneMatchHits(headers: Record<string, string | undefined>, etag: string): boolean {
  const value = headers[IF_NONE_MATCH_HEADER.toLowerCase()];
  if (value === undefined) return false;
  const tags = listedTags(value);
  return tags === 'any' || tags.some((tag) => `"${tag.opaque}"` === etag);
}
