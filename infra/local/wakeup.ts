/**
 * Sleeps that end early on a wake: how the local stack's pollers idle cheaply and still start at
 * once when work arrives. A wake that finds nobody asleep is kept (up to `maxPending`), so work that
 * arrives while a poller is between its empty receive and its sleep is not missed.
 */
export class Wakeup {
  readonly #sleepers: (() => void)[] = [];
  readonly #maxPending: number;
  #pending = 0;

  constructor(maxPending = 1) {
    this.#maxPending = maxPending;
  }

  /** Resolves after `ms`, or at once on a pending wake, or at the next `wake()`. */
  sleep(ms: number): Promise<void> {
    if (this.#pending > 0) {
      this.#pending -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        const index = this.#sleepers.indexOf(done);
        if (index >= 0) this.#sleepers.splice(index, 1);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#sleepers.push(done);
    });
  }

  /** Ends `count` sleeps, the longest asleep first; what finds nobody asleep is kept for the next sleeps. */
  wake(count = 1): void {
    for (let i = 0; i < count; i += 1) {
      const sleeper = this.#sleepers[0];
      if (sleeper) sleeper();
      else {
        this.#pending = Math.min(this.#maxPending, this.#pending + count - i);
        return;
      }
    }
  }

  /** Ends every sleep now (stopping). */
  wakeAll(): void {
    for (const sleeper of [...this.#sleepers]) sleeper();
  }
}
