import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/**
 * The records of the table's stream that the webhook fan-out consumes: new outbox items (entity
 * `Event` or `EventBatch`). One pattern, in Lambda's event-filtering syntax, for both consumers:
 * the CDK event source sends it as FilterCriteria (so Lambda is never invoked for other writes) and
 * the local stream pump evaluates it with {@link matchesStreamFilter}.
 */
export const OUTBOX_STREAM_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { entity: { S: ['Event', 'EventBatch'] } } },
} as const;

/** A stream record as far as filters look at it: Lambda's shape (`eventName`, `dynamodb.NewImage`). */
export interface FilterableStreamRecord {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, AttributeValue> } & Record<string, unknown>;
}

type Pattern = { readonly [key: string]: Pattern | readonly string[] };

/**
 * Whether a record matches a pattern of exact-value lists (the subset of Lambda event filtering the
 * service uses): every key of the pattern must be present, a list matches a string equal to one of
 * its values, an object recurses.
 */
export function matchesStreamFilter(record: FilterableStreamRecord, pattern: Pattern = OUTBOX_STREAM_FILTER): boolean {
  return matches(record as unknown, pattern);
}

function matches(value: unknown, pattern: Pattern | readonly string[]): boolean {
  if (Array.isArray(pattern)) return typeof value === 'string' && pattern.includes(value);
  if (typeof value !== 'object' || value === null) return false;
  return Object.entries(pattern as Pattern).every(([key, inner]) => matches((value as Record<string, unknown>)[key], inner));
}
