/** Latency and throughput of an async operation run by `concurrency` callers for `durationMs`. */
export interface Measurement {
  name: string;
  count: number;
  perSecond: number;
  p50: number;
  p99: number;
}

export async function measure(name: string, operation: () => Promise<void>, options: { durationMs: number; concurrency: number; warmup?: number }): Promise<Measurement> {
  for (let i = 0; i < (options.warmup ?? 50); i += 1) await operation();
  const samples: number[] = [];
  const started = performance.now();
  const deadline = started + options.durationMs;
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        await operation();
        samples.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? Number.NaN;
  return { name, count: samples.length, perSecond: samples.length / elapsed, p50: at(0.5), p99: at(0.99) };
}

export function formatRow(m: Measurement): string {
  return `${m.name.padEnd(44)} ${m.perSecond.toFixed(0).padStart(7)} req/s   p50 ${m.p50.toFixed(2).padStart(6)} ms   p99 ${m.p99.toFixed(2).padStart(6)} ms   (n=${m.count})`;
}
