import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemKey, type MarkupRecord } from '../../shared/db/items.js';
import { eventually } from '../support/polling.js';
import { killStack, startStack, type StartedStack } from '../support/processes.js';
import { delta, threadBody } from '../support/threads.js';
import { pdfBytes } from '../support/uploads.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * DESIGN.md: "The local stack keeps its work across a restart (without MEMORY=1): a kill -9 and a
 * restart on the same DATA_DIR loses no committed event, conversion or thumbnail job." `npm start` in
 * a process group of its own, killed with SIGKILL as a whole (the JVM too), restarted on its DATA_DIR.
 */

const ROUNDS = 3;
const COMMENTS = 9;
/** From the restart to every job done: a start on a loaded machine, the stream pump, nine deliveries, a PDF conversion. */
const RECOVERY_MS = 60_000;

let receiver: WebhookReceiver;
const dirs: string[] = [];
const running = new Map<string, StartedStack>();

beforeAll(async () => {
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  for (const [dataDir, started] of running) await killStack(started, dataDir).catch(() => undefined);
  await receiver.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function api(started: StartedStack, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${started.stack.baseUrl}/api/v2${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${started.stack.workspaceApiKey}`,
      'Service-API-Version': '2023-02-22',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text };
}

function ok<T = any>(answer: { status: number; body: any }, what: string): T {
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data as T;
}

/**
 * The work one round commits: nine comments (each a comment_created event) and a PDF markup to
 * convert, all at once, then a webpage markup to thumbnail (its job takes milliseconds: last, so a
 * kill right after its response finds it queued or running); resolves with the last response.
 */
async function commitWork(started: StartedStack) {
  const { workspaceId } = started.stack;
  const page = ok<{ id: string; url: string }>(
    await api(started, 'POST', '/markups/url', { url: 'https://example.com/restart' }),
    'webpage markup',
  );
  const form = new FormData();
  form.append('file', new Blob([pdfBytes(`Restart ${Date.now()}`)], { type: 'application/pdf' }), 'restart.pdf');
  const [threads, pdf] = await Promise.all([
    Promise.all(
      Array.from({ length: COMMENTS }, async (_, i) =>
        ok<{ id: string }>(
          await api(
            started,
            'POST',
            '/threads',
            threadBody({ id: page.id, type: 'webpage', url: page.url } as MarkupRecord, { message: delta(`Comment ${i}`) }),
          ),
          'thread',
        ),
      ),
    ),
    fetch(`${started.stack.baseUrl}/api/v2/markups/file?workspaceId=${workspaceId}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${started.stack.workspaceApiKey}`, 'Service-API-Version': '2023-02-22' },
      body: form,
    }).then(async (posted) => ok<{ id: string }>({ status: posted.status, body: await posted.json() }, 'PDF markup')),
  ]);
  const thumbnailed = ok<{ id: string }>(
    await api(started, 'POST', '/markups/url', { url: 'https://example.com/thumbnail' }),
    'webpage markup to thumbnail',
  );
  return { threadIds: threads.map((thread) => thread.id), pdfId: pdf.id, thumbnailedId: thumbnailed.id };
}

/**
 * Distinct `webhook-id`s of the comment_created deliveries of these threads the receiver got, without
 * the requests at `unanswered` indexes (held open until the kill: never delivered).
 */
function deliveredComments(threadIds: readonly string[], unanswered: ReadonlySet<number> = new Set()): Set<string> {
  const ids = new Set<string>();
  for (const [index, request] of receiver.requests.entries()) {
    if (unanswered.has(index)) continue;
    let body: any;
    try {
      body = JSON.parse(request.body);
    } catch {
      continue;
    }
    if (body?.type === 'comment_created' && threadIds.includes(body.data?.comment?.id)) ids.add(String(request.headers['webhook-id']));
  }
  return ids;
}

/** A markup as stored, read from the stack's own DynamoDB Local. */
async function storedMarkup(dataDir: string, markupId: string): Promise<Record<string, any> | undefined> {
  const services = JSON.parse(readFileSync(join(dataDir, 'services.json'), 'utf8'));
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: services.endpoints.dynamodb, region: services.region, credentials: services.credentials }),
  );
  try {
    return (await db.send(new GetCommand({ TableName: services.tableName, Key: itemKey(markupId), ConsistentRead: true }))).Item;
  } finally {
    db.destroy();
  }
}

type KillPoint = 'right after the responses' | 'while deliveries are in flight';

async function roundsOf(killPoint: KillPoint) {
  const dataDir = mkdtempSync(join(tmpdir(), 'review-board-restart-'));
  dirs.push(dataDir);
  let started = await startStack(dataDir, { LOG_LEVEL: 'warn' });
  running.set(dataDir, started);
  ok(await api(started, 'POST', '/webhook-registrations', { url: receiver.url, eventTypes: ['comment_created'] }), 'webhook registration');
  const outcomes: {
    round: number;
    delivered: number;
    pdfReady: boolean;
    thumbnailState: string;
    deliveredBeforeKill: number;
    upMs: number;
    doneMs: number;
  }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Deliveries in flight: the receiver holds the next three requests open until the kill ends them.
    const unanswered = new Set<number>();
    if (killPoint === 'while deliveries are in flight') {
      for (let i = 0; i < 3; i++) unanswered.add(receiver.requests.length + i);
      receiver.script({ hang: true }, { hang: true }, { hang: true });
    }
    const work = await commitWork(started);
    if (killPoint === 'while deliveries are in flight')
      await eventually(
        async () => receiver.requests.length,
        (count) => count > Math.min(...unanswered),
        30_000,
      );
    const deliveredBeforeKill = deliveredComments(work.threadIds, unanswered).size;
    await killStack(started, dataDir);
    running.delete(dataDir);

    const restartAt = Date.now();
    started = await startStack(dataDir, { LOG_LEVEL: 'warn' });
    running.set(dataDir, started);
    const upMs = Date.now() - restartAt;
    const deadline = Date.now() + RECOVERY_MS;
    const done = async () => {
      const [pdf, thumbnailed] = await Promise.all([storedMarkup(dataDir, work.pdfId), storedMarkup(dataDir, work.thumbnailedId)]);
      return {
        delivered: deliveredComments(work.threadIds, unanswered).size,
        pdfReady: pdf?.isReady === true,
        thumbnailState: String(thumbnailed?.thumbnailState),
      };
    };
    const outcome = await eventually(
      done,
      (now) => now.delivered === COMMENTS && now.pdfReady && now.thumbnailState !== 'pending',
      deadline - Date.now(),
    );
    outcomes.push({ round, ...outcome, deliveredBeforeKill, upMs, doneMs: Date.now() - restartAt });
  }
  await killStack(started, dataDir);
  running.delete(dataDir);
  return outcomes;
}

describe('the local stack keeps its queued work across kill -9 and a restart on the same DATA_DIR', () => {
  it.each<KillPoint>(['right after the responses', 'while deliveries are in flight'])(
    'killed %s, three times: every comment_created event is delivered, the PDF converted and the thumbnail job run after the restart',
    async (killPoint) => {
      const outcomes = await roundsOf(killPoint);

      console.info(`restart, killed ${killPoint}: ${JSON.stringify(outcomes)}`);
      expect(outcomes).toEqual(
        Array.from({ length: ROUNDS }, (_, round) =>
          expect.objectContaining({ round, delivered: COMMENTS, pdfReady: true, thumbnailState: expect.not.stringMatching(/^pending$/) }),
        ),
      );
    },
    (ROUNDS + 1) * (RECOVERY_MS + 60_000),
  );
});
