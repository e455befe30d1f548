/** What an attempt of `withBackoff` answers when it made no progress and should run again after a wait. */
export const AGAIN = Symbol('again');

export interface BackoffOptions {
  /** Attempts in all, the first included. @default 8 */
  attempts?: number;
  /** Stop retrying once this many milliseconds have passed since the first attempt. */
  budgetMs?: number;
  /** The wait before retry n is drawn from [0, min(capMs, baseMs * 2^n)) ("full jitter"). @default 10 */
  baseMs?: number;
  /** @default 1000 */
  capMs?: number;
  /** Errors worth another attempt; any other error is thrown at once. @default none */
  retryOn?: (error: unknown) => boolean;
  /**
   * The error to throw when the attempts or the budget run out while the work still asks for
   * another try; without it the last retryable error is thrown as it is (or, after `AGAIN`, an Error).
   */
  exhausted?: () => Error;
}

/**
 * Runs `work` until it answers something other than `AGAIN` and throws nothing that `retryOn`
 * accepts, waiting with capped exponential backoff and full jitter between attempts, so callers
 * that collide (transaction conflicts, throttled batches, optimistic writes that read stale data)
 * spread out instead of colliding again. `work` gets the attempt number, 0 first.
 */
export async function withBackoff<T>(work: (attempt: number) => Promise<T | typeof AGAIN>, options: BackoffOptions = {}): Promise<T> {
  const { attempts = 8, budgetMs, baseMs = 10, capMs = 1000, retryOn = () => false, exhausted } = options;
  const deadline = budgetMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + budgetMs;
  for (let attempt = 0; ; attempt += 1) {
    let failure: unknown;
    try {
      const result = await work(attempt);
      if (result !== AGAIN) return result;
      failure = AGAIN;
    } catch (error) {
      if (!retryOn(error)) throw error;
      failure = error;
    }
    if (attempt + 1 >= attempts || Date.now() >= deadline) {
      if (exhausted) throw exhausted();
      throw failure === AGAIN ? new Error(`gave up after ${attempt + 1} attempts`) : failure;
    }
    const wait = Math.random() * Math.min(capMs, baseMs * 2 ** attempt);
    // `baseMs: 0` retries at once (a candidate that is simply tried next, not contention to wait out).
    if (wait > 0) await sleep(wait);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
