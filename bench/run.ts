import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack } from '../infra/local/stack.js';
import { benchAnchoring } from './anchoring.js';
import { benchBundles } from './bundles.js';
import { benchEmbedMount } from './embed-mount.js';
import { benchExchange } from './exchange.js';
import { benchFiles } from './files.js';
import { benchLive } from './live.js';
import { benchLiveness } from './liveness.js';
import { benchMoves } from './moves.js';
import { benchRequests } from './requests.js';
import { benchSearch } from './search.js';
import { benchThreadPages } from './thread-pages.js';
import { benchWebhooks } from './webhooks.js';

/**
 * `npm run bench`: request latency and throughput on the local stack beside the DynamoDB floor,
 * then each function's bundle size and cold import time. BENCH_SECONDS (default 5) per measurement,
 * BENCH_CONCURRENCY (default 8) for the throughput rows. BENCH_ONLY picks sections, comma-separated:
 * requests, threads, exchange, liveness, files, webhooks, live, moves, search, bundles, anchoring, embed (all by default). BENCH_ROWS
 * narrows the
 * request rows to those whose name contains one of its comma-separated parts (`GET /workspace`).
 */
process.env.LOG_LEVEL = 'warn';
const durationMs = Number(process.env.BENCH_SECONDS ?? 5) * 1000;
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const sections = [
  'requests',
  'threads',
  'exchange',
  'liveness',
  'files',
  'webhooks',
  'live',
  'moves',
  'search',
  'bundles',
  'anchoring',
  'embed',
] as const;
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
const unknown = only?.filter((name) => !(sections as readonly string[]).includes(name));
if (unknown?.length) throw new Error(`BENCH_ONLY: unknown section(s) ${unknown.join(', ')}; choose from ${sections.join(', ')}`);
const want = (section: (typeof sections)[number]) => !only || only.includes(section);

// Bundles, anchoring and the embed client's mount need no local stack: started only for the sections that do.
const needsStack = sections.filter((section) => section !== 'bundles' && section !== 'anchoring' && section !== 'embed').some(want);
const dataDir = mkdtempSync(join(tmpdir(), 'review-board-bench-'));
const local = needsStack ? await startLocalStack({ port: 0, dataDir, memory: true }) : undefined;
try {
  if (local) await benchOnStack(local);
} finally {
  await local?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
if (want('bundles')) await benchBundles();
if (want('anchoring')) {
  process.stdout.write('\n');
  await benchAnchoring({
    pairsPerKind: Number(process.env.BENCH_ANCHOR_PAIRS ?? 20),
    firstSeed: Number(process.env.BENCH_ANCHOR_SEED ?? 1),
    runs: Number(process.env.BENCH_ANCHOR_RUNS ?? 9),
  });
}
if (want('embed')) {
  process.stdout.write('\n');
  await benchEmbedMount();
}

async function benchOnStack(local: Awaited<ReturnType<typeof startLocalStack>>): Promise<void> {
  if (want('requests')) {
    process.stdout.write(
      `Requests on the local stack (${durationMs / 1000} s each; handlers in-process; DynamoDB Local ${local.services.endpoints.dynamodb})\n\n`,
    );
    const rows = process.env.BENCH_ROWS?.split(',')
      .map((row) => row.trim())
      .filter((row) => row.length > 0);
    await benchRequests(local.stack, { durationMs, concurrency, ...(rows?.length ? { rows } : {}) });
  }
  if (want('threads')) {
    process.stdout.write(
      "\nThread pages: one page of 50 as markups grow (threads of three messages; one caller at a time), its DynamoDB calls and read units, and the old layout's small-board page as the reference; a stale unread count's recount on the same markups, beside the recount from the whole conversation\n\n",
    );
    await benchThreadPages(local.stack, { durationMs });
  }
  if (want('exchange')) {
    process.stdout.write('\nEmbedded commenting: the exchange, and a thread created with an exchange token beside an API key\n\n');
    await benchExchange(local.stack, { durationMs, concurrency });
  }
  if (want('liveness')) {
    process.stdout.write(
      '\nExchange tokens: a request with the liveness check (installation and end user still there) beside the same request without it\n\n',
    );
    await benchLiveness(local.stack, { durationMs, concurrency });
  }
  if (want('files')) await benchFiles(local.stack, { runs: Number(process.env.BENCH_UPLOAD_RUNS ?? 20) });
  if (want('webhooks')) {
    process.stdout.write(
      '\nWebhooks: from the answer of the operation to the receiver (outbox, stream pump, fan-out, queue, signed delivery)\n\n',
    );
    await benchWebhooks(local.stack, { runs: Number(process.env.BENCH_WEBHOOK_RUNS ?? 50) });
  }
  if (want('live')) {
    process.stdout.write(
      "\nLive updates: from the answer of a write to each subscriber's receipt (outbox with seq, stream pump, fan-out, socket), web/live's client on ws\n\n",
    );
    await benchLive(local.stack, { runs: Number(process.env.BENCH_LIVE_RUNS ?? 50), sizes: [1, 500] });
  }
  if (want('moves')) {
    process.stdout.write('\nMoves across workspaces: the answer, and the move worker done carrying the tree (BENCH_MOVE_RUNS runs)\n\n');
    await benchMoves(local.stack, { runs: Number(process.env.BENCH_MOVE_RUNS ?? 3), markups: 5_000, warmUpMarkups: 100 });
  }
  if (want('search')) {
    process.stdout.write(
      '\nSearch and list as the workspace grows: one caller at a time, every row one request (BENCH_SEARCH_SIZES, default 50,5000,50000)\n\n',
    );
    const sizes = process.env.BENCH_SEARCH_SIZES?.split(',').map(Number);
    await benchSearch(local.stack, { durationMs, ...(sizes?.length ? { sizes } : {}) });
  }
}
