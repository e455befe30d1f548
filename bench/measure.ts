/** Latency and throughput of an async operation run by `concurrency` callers for `durationMs`. */
export interface Measurement {
  name: string;
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
}

interface Samples {
  latencies: number[];
  elapsedMs: number;
}

export async function measure(
  name: string,
  operation: () => Promise<void>,
  options: { durationMs: number; concurrency: number; warmup?: number },
): Promise<Measurement> {
  for (let i = 0; i < (options.warmup ?? 50); i += 1) await operation();
  return summarize(name, await sample(operation, options));
}

/**
 * Two operations measured in turns, so that whatever drifts on a shared machine (a JIT compiling, a
 * collector, other processes) weighs on both alike. One at a time (concurrency 1) they alternate
 * call by call, in the order A B B A A B …; with more callers each side has `rounds` windows, in
 * that order. Each side's figures are over all its samples together; one at a time its throughput
 * is calls over the time its own calls took.
 */
export async function measureInTurns(
  sides: readonly [{ name: string; operation: () => Promise<void> }, { name: string; operation: () => Promise<void> }],
  options: { durationMs: number; concurrency: number; rounds: number },
): Promise<[Measurement, Measurement]> {
  const pooled: [Samples, Samples] = [
    { latencies: [], elapsedMs: 0 },
    { latencies: [], elapsedMs: 0 },
  ];
  if (options.concurrency === 1) {
    const deadline = performance.now() + 2 * options.durationMs;
    for (let turn = 0; performance.now() < deadline; turn += 1) {
      for (const index of turn % 2 === 0 ? [0, 1] : [1, 0]) {
        const t0 = performance.now();
        await sides[index]!.operation();
        const took = performance.now() - t0;
        pooled[index]!.latencies.push(took);
        pooled[index]!.elapsedMs += took;
      }
    }
  } else {
    const window = { durationMs: options.durationMs / options.rounds, concurrency: options.concurrency };
    for (let round = 0; round < options.rounds; round += 1) {
      for (const index of round % 2 === 0 ? [0, 1] : [1, 0]) {
        const taken = await sample(sides[index]!.operation, window);
        pooled[index]!.latencies.push(...taken.latencies);
        pooled[index]!.elapsedMs += taken.elapsedMs;
      }
    }
  }
  return [summarize(sides[0].name, pooled[0]), summarize(sides[1].name, pooled[1])];
}

async function sample(operation: () => Promise<void>, options: { durationMs: number; concurrency: number }): Promise<Samples> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + options.durationMs;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await operation();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - started };
}

function summarize(name: string, { latencies, elapsedMs }: Samples): Measurement {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { name, count: sorted.length, perSecond: sorted.length / (elapsedMs / 1000), p50: at(0.5), p99: at(0.99) };
}

export function formatRow(m: Measurement): string {
  return `${m.name.padEnd(44)} ${m.perSecond.toFixed(0).padStart(7)} req/s   p50 ${m.p50.toFixed(2).padStart(6)} ms   p99 ${m.p99.toFixed(2).padStart(6)} ms   (n=${m.count})`;
}
