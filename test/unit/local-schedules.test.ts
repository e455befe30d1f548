import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSchedule } from '../../infra/local/schedules.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('the local stack runs scheduled functions as their EventBridge rules do', () => {
  it('runs once at start (atStart), then every period, one run at a time, and never after stop', async () => {
    vi.useFakeTimers();
    const events: unknown[] = [];
    let release!: () => void;
    const handler = vi.fn(async (event: { atStart?: true }) => {
      events.push(event);
      if (events.length === 2) await new Promise<void>((resolve) => (release = resolve));
    });
    const schedule = startSchedule(handler, 5, () => undefined);

    await vi.advanceTimersByTimeAsync(0);
    const atStart = [...events];
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    // The second run hangs: the third period passes without a run overlapping it.
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    const whileHanging = handler.mock.calls.length;
    release();
    await vi.advanceTimersByTimeAsync(0);
    const afterRelease = handler.mock.calls.length;
    const stopping = schedule.stop();
    await vi.advanceTimersByTimeAsync(0);
    await stopping;
    await vi.advanceTimersByTimeAsync(20 * 60_000);

    expect(atStart).toEqual([{ atStart: true }]);
    expect(whileHanging).toBe(2);
    expect(afterRelease).toBe(3);
    expect(events.slice(1)).toEqual([{}, {}]);
    expect(handler).toHaveBeenCalledTimes(3);
  });

  it('reports a failed run and runs again at the next period', async () => {
    vi.useFakeTimers();
    const errors: unknown[] = [];
    const handler = vi.fn().mockRejectedValueOnce(new Error('table unreachable')).mockResolvedValue(undefined);
    const schedule = startSchedule(handler, 1, (error) => errors.push(error));

    await vi.advanceTimersByTimeAsync(60_000);
    await schedule.stop();

    expect(errors).toEqual([new Error('table unreachable')]);
    expect(handler).toHaveBeenCalledTimes(2);
  });
});
