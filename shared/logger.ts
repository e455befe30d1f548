import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { getConfig } from './config.js';

/**
 * The service's logger: Powertools for AWS Lambda's Logger (one JSON line per entry, with the
 * Lambda context's cold start, function name and request id once `addContext` ran), behind the
 * `logger.info(message, fields)` calls the code has always made.
 *
 * - Made on first use, so the level comes from the environment as it is then (LOG_LEVEL, or
 *   POWERTOOLS_LOG_LEVEL; tests and the local stack set it after importing this module). Debug
 *   sampling: POWERTOOLS_LOGGER_SAMPLE_RATE (a fraction of invocations logged at debug).
 * - Fields are redacted before they reach the line (`redact`): credentials never appear in a log.
 */
let powertools: Logger | undefined;
type Level = 'debug' | 'info' | 'warn' | 'error';
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** The level lines are written from; lines below it cost nothing (no redaction, no formatting). */
let threshold: number = RANK.info;

function instance(): Logger {
  if (!powertools) {
    let logLevel: Level = 'info';
    try {
      logLevel = getConfig().logLevel;
    } catch {
      // an invalid environment is reported by the entry point; logging still works
    }
    threshold = RANK[logLevel];
    powertools = new Logger({
      serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'review-board-service',
      logLevel: logLevel.toUpperCase() as 'INFO',
    });
  }
  return powertools;
}

/** Field names whose values are credentials, at any depth (also presigned-URL and form-POST fields). */
const SECRET_KEY = /authorization|cookie|token|secret|password|signing[-_]?key|api[-_]?key|private[-_]?key|signature|credential/i;
/**
 * What a presigned URL or an AWS authorization carries: `X-Amz-Signature=…`, `X-Amz-Security-Token=…`, `Credential=…`, also URL-encoded.
 */
const SIGNED_PARAMETER = /\b((?:X-Amz-)?(?:Signature|Security-Token|Credential))(?:(=|:\s*)[^&\s"'<>#,]+|(%3D)(?:(?!%26)[^&\s"'<>#,])+)/gi;
/**
 * Credentials inside text: bearer and basic credentials; JWTs (exchange and customer tokens: a JSON
 * header opens `{"` or `{` and white space, which base64url writes `e` + w/x/y/z, so `eyJ`, `eyA`,
 * `ewo`…); API key secrets, whatever the case of their id (the id stays: it names the key, not the
 * secret), and anything else after `rbk_`; webhook signing keys; presigned-URL signatures.
 */
const SECRET_TEXT: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[\w.~+/=-]+/gi, '$1 [redacted]'],
  [/\be[wxyz][\w-]{14,}\.[\w-]{8,}\.[\w-]*/g, '[redacted]'],
  [/(rbk_[0-9a-f]{32}_)[\w-]+/gi, '$1[redacted]'],
  [/rbk_(?![0-9a-f]{32}_\[redacted\])[\w-]+/gi, 'rbk_[redacted]'],
  [/\bwhsec_[\w+/=-]+/g, 'whsec_[redacted]'],
  [SIGNED_PARAMETER, '$1$2$3[redacted]'],
];

/**
 * Bounds of one `redact` call, so a log line costs little whatever it is given: containers deeper
 * than `DEPTH` become a marker (never passed through unredacted), each container keeps its first
 * `ENTRIES` entries, and the whole value at most `CONTAINERS` containers.
 */
const LIMITS = { DEPTH: 8, ENTRIES: 100, CONTAINERS: 1_000 } as const;
const MARKER = { depth: '[depth limit]', circular: '[circular]', budget: '[omitted]', unreadable: '[unreadable]' } as const;

interface Walk {
  containers: number;
  /** The containers on the path from the root: a value met again among them is a cycle. */
  ancestors: Set<object>;
}

function redactText(text: string): string {
  return SECRET_TEXT.reduce((redacted, [pattern, replacement]) => redacted.replace(pattern, replacement), text);
}

/**
 * A copy of `value` fit for a log line, with credentials replaced by `[redacted]`: secret-named
 * fields (of objects and Maps) and secrets inside strings, at every depth. Total: what it does not
 * walk (too deep, a cycle, past its budget) becomes a marker, never the original. Maps become
 * objects, Sets arrays, bigints, Dates and URLs text, binary data its size.
 */
export function redact(value: unknown): unknown {
  return redactValue(value, 0, { containers: 0, ancestors: new Set() });
}

function redactValue(value: unknown, depth: number, walk: Walk): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (value instanceof URL) return redactText(value.href);
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return `[${value.constructor.name} ${value.byteLength} bytes]`;
  if (depth >= LIMITS.DEPTH) return MARKER.depth;
  if (walk.ancestors.has(value)) return MARKER.circular;
  if (++walk.containers > LIMITS.CONTAINERS) return MARKER.budget;
  walk.ancestors.add(value);
  try {
    return redactContainer(value, depth, walk);
  } catch {
    return MARKER.unreadable;
  } finally {
    walk.ancestors.delete(value);
  }
}

function redactContainer(value: object, depth: number, walk: Walk): unknown {
  const child = (item: unknown) => redactValue(item, depth + 1, walk);
  if (value instanceof Error) {
    const error = value as Error & { code?: unknown; status?: unknown };
    return {
      name: error.name,
      message: redactText(String(error.message)),
      stack: error.stack === undefined ? undefined : redactText(error.stack),
      ...(error.code !== undefined ? { code: child(error.code) } : {}),
      ...(error.status !== undefined ? { status: child(error.status) } : {}),
      ...(error.cause !== undefined ? { cause: child(error.cause) } : {}),
    };
  }
  if (Array.isArray(value)) return withRest(value.slice(0, LIMITS.ENTRIES).map(child), value.length);
  if (value instanceof Set) return withRest(first(value.values()).map(child), value.size);
  if (value instanceof Map) {
    const entries = first(value.entries());
    if (entries.every(([key]) => key === null || typeof key !== 'object'))
      return fields(
        entries.map(([key, item]) => [String(key), () => item]),
        value.size,
        child,
      );
    return withRest(
      entries.map(([key, item]) => [child(key), child(item)]),
      value.size,
    );
  }
  const keys = Object.keys(value);
  return fields(
    keys.slice(0, LIMITS.ENTRIES).map((key) => [key, () => (value as Record<string, unknown>)[key]]),
    keys.length,
    child,
  );
}

/** The first entries of an iterator, without walking the rest. */
function first<T>(iterator: IterableIterator<T>): T[] {
  const items: T[] = [];
  for (const item of iterator) {
    if (items.length === LIMITS.ENTRIES) break;
    items.push(item);
  }
  return items;
}

function withRest(items: unknown[], total: number): unknown[] {
  return total > items.length ? [...items, `[${total - items.length} more items]`] : items;
}

/** An object of redacted fields; `read` may throw (a getter), which spoils that field only. */
function fields(entries: [string, () => unknown][], total: number, child: (item: unknown) => unknown): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, read] of entries) {
    let item: unknown;
    try {
      item = read();
    } catch {
      result[redactText(key)] = MARKER.unreadable;
      continue;
    }
    result[redactText(key)] =
      SECRET_KEY.test(key) && item !== undefined && item !== null && typeof item !== 'boolean' ? '[redacted]' : child(item);
  }
  if (total > entries.length) result['[more fields]'] = total - entries.length;
  return result;
}

type Fields = Record<string, unknown>;
const write = (level: Level, message: string, fields: Fields) => {
  const entry = instance();
  // Debug sampling (POWERTOOLS_LOGGER_SAMPLE_RATE) may lower Powertools' level for an invocation.
  if (RANK[level] < threshold && entry.getLevelName() !== 'DEBUG') return;
  if (Object.keys(fields).length === 0) entry[level](redact(message) as string);
  else entry[level](redact(message) as string, redact(fields) as Fields);
};

export const logger = {
  debug: (message: string, fields: Fields = {}) => write('debug', message, fields),
  info: (message: string, fields: Fields = {}) => write('info', message, fields),
  warn: (message: string, fields: Fields = {}) => write('warn', message, fields),
  error: (message: string, fields: Fields = {}) => write('error', message, fields),
  /** Adds the invocation's Lambda context (cold start, function name, request id) to the lines that follow. */
  addContext: (context: Context) => instance().addContext(context),
};

/** Forgets the logger, so the next line reads the environment again (tests). */
export function resetLogger(): void {
  powertools = undefined;
}
