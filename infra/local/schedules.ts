/**
 * A scheduled function's handler as the local stack calls it: no EventBridge fields (none is read);
 * `atStart` on the run made as the stack starts.
 */
export type ScheduledHandler = (event: { atStart?: true }) => Promise<unknown>;

export interface Schedule {
  stop(): Promise<void>;
}

/**
 * Runs a scheduled function as its EventBridge rule does deployed: every `everyMinutes`, and once
 * at start as well, so work a crash or a kill left behind is picked up when the stack comes back.
 * One run at a time (a slow run delays the next); a failure is reported and the next run tries again.
 * Idle, it costs one run every few minutes: the stack stays quiet.
 */
export function startSchedule(handler: ScheduledHandler, everyMinutes: number, onError: (error: unknown) => void): Schedule {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const run = (event: { atStart?: true }) => {
    running = running.then(async () => {
      if (stopped) return;
      await handler(event).catch(onError);
    });
  };
  run({ atStart: true });
  const timer = setInterval(() => run({}), everyMinutes * 60_000);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
