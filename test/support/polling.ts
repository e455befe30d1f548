/**
 * Polls `read` every `intervalMs` (100 ms) until `done` holds of its answer or `timeoutMs` passed,
 * and answers the last value read: the caller's assertion on it then says what was still missing.
 * For work that finishes after the response (workers, queued jobs); never a fixed wait. Unit tests
 * of in-process timers of a few milliseconds poll every few milliseconds.
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
