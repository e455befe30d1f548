import { describe, expect, it, vi } from 'vitest';
import { AGAIN, withBackoff } from '../../shared/db/core/backoff.js';

describe('withBackoff', () => {
  it('answers the first result that is not AGAIN', async () => {
    const seen: number[] = [];

    const result = await withBackoff(async (attempt) => (seen.push(attempt), attempt < 2 ? AGAIN : 'done'), { baseMs: 1 });

    expect(result).toBe('done');
    expect(seen).toEqual([0, 1, 2]);
  });

  it('retries only the errors retryOn accepts and throws any other at once', async () => {
    let calls = 0;
    const work = async () => {
      calls += 1;
      throw new Error(calls === 1 ? 'busy' : 'broken');
    };

    await expect(withBackoff(work, { baseMs: 1, retryOn: (error) => (error as Error).message === 'busy' })).rejects.toThrow('broken');
    expect(calls).toBe(2);
  });

  it('throws what exhausted makes once the attempts run out', async () => {
    let calls = 0;

    const run = withBackoff(async () => ((calls += 1), AGAIN), { attempts: 3, baseMs: 1, exhausted: () => new Error('try later') });

    await expect(run).rejects.toThrow('try later');
    expect(calls).toBe(3);
  });

  it('rethrows the last retryable error when no exhausted is given', async () => {
    const run = withBackoff(
      async () => {
        throw new Error('busy');
      },
      { attempts: 2, baseMs: 1, retryOn: () => true },
    );

    await expect(run).rejects.toThrow('busy');
  });

  it('stops at the time budget even with attempts left', async () => {
    let calls = 0;
    const started = Date.now();

    const run = withBackoff(async () => ((calls += 1), AGAIN), { attempts: 1000, budgetMs: 50, baseMs: 20, capMs: 20 });

    await expect(run).rejects.toThrow('gave up');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(calls).toBeLessThan(1000);
  });

  it('tries again at once with baseMs 0 (the next candidate, not contention): no timer is set between attempts', async () => {
    vi.useFakeTimers();
    try {
      const seen: number[] = [];

      const result = await withBackoff(async (attempt) => (seen.push(attempt), attempt < 4 ? AGAIN : 'fifth'), { baseMs: 0 });

      expect(result).toBe('fifth');
      expect(seen).toEqual([0, 1, 2, 3, 4]);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
