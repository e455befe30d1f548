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
    powertools = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'review-board-service', logLevel: logLevel.toUpperCase() as 'INFO' });
  }
  return powertools;
}

/** Field names whose values are credentials, at any depth. */
const SECRET_KEY = /authorization|cookie|token|secret|password|signing[-_]?key|api[-_]?key|private[-_]?key/i;
/** Credentials inside text: bearer and basic credentials, JWTs (exchange tokens), API key secrets, webhook signing keys. */
const SECRET_TEXT: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[\w.~+/=-]+/gi, '$1 [redacted]'],
  [/\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g, '[redacted]'],
  [/\b(rbk_[0-9a-f]{32}_)[\w-]+/g, '$1[redacted]'],
  [/\bwhsec_[\w+/=]+/g, 'whsec_[redacted]'],
];

/** A copy of `value` with credentials replaced by `[redacted]`: secret-named fields, and secrets inside strings. */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return SECRET_TEXT.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), value);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (value instanceof Error) {
    const error = value as Error & { code?: unknown; status?: unknown };
    return { name: error.name, message: redact(error.message), stack: redact(error.stack), ...(error.code !== undefined ? { code: error.code } : {}), ...(error.status !== undefined ? { status: error.status } : {}) };
  }
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, SECRET_KEY.test(key) && item !== undefined && item !== null && typeof item !== 'boolean' ? '[redacted]' : redact(item, depth + 1)]));
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
