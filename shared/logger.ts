import { getConfig } from './config.js';

type Level = 'debug' | 'info' | 'warn' | 'error';
const rank: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function threshold(): number {
  try {
    return rank[getConfig().logLevel];
  } catch {
    return rank.info;
  }
}

/** One JSON line per entry, so CloudWatch Logs Insights can query every field. */
function write(level: Level, message: string, fields: Record<string, unknown>): void {
  if (rank[level] < threshold()) return;
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields }, (_key, value: unknown) =>
    value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value,
  );
  if (level === 'error' || level === 'warn') process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

export const logger = {
  debug: (message: string, fields: Record<string, unknown> = {}) => write('debug', message, fields),
  info: (message: string, fields: Record<string, unknown> = {}) => write('info', message, fields),
  warn: (message: string, fields: Record<string, unknown> = {}) => write('warn', message, fields),
  error: (message: string, fields: Record<string, unknown> = {}) => write('error', message, fields),
};
