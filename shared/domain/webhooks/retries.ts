/**
 * Delays before the retries of a delivery, Standard Webhooks' schedule: attempt 1 is immediate,
 * attempt n+1 waits RETRY_DELAYS_MS[n-1] after attempt n fails. After the last the delivery is failed.
 */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000] as const;

/** Attempts of one delivery: the first and every retry. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** A registration whose every attempt failed for this long is disabled. */
export const FAILING_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** Up to ±20% of each delay, so receivers that fail together are not retried in lock step. */
const JITTER = 0.2;

/**
 * Milliseconds to wait before the attempt after failed attempt `attempt` (1-based), with jitter
 * (`random` in [0, 1)); undefined when `attempt` was the last. The first retry lands in 4-6 s.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number | undefined {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined || attempt < 1) return undefined;
  return Math.round(base * (1 + JITTER * (2 * random() - 1)));
}

/** How an attempt ended: an HTTP status, or no answer (timeout, refused address, connection error). */
export type AttemptResult = { statusCode: number } | { error: string };

/**
 * What an attempt's result means: `delivered` (2xx), `gone` (410: the registration is disabled),
 * `retry` (5xx, 429, no answer), `failed` (any other status: 3xx, since redirects are not followed,
 * and 4xx, which a repeat would not change).
 */
export function classifyAttempt(result: AttemptResult): 'delivered' | 'gone' | 'retry' | 'failed' {
  if (!('statusCode' in result)) return 'retry';
  const status = result.statusCode;
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  if (status === 429 || status >= 500) return 'retry';
  return 'failed';
}
