import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { handler as markupsHandler } from '../functions/markups/handler.js';
import { markupsRoutes } from '../functions/markups/routes.js';
import { handler as messagesHandler } from '../functions/messages/handler.js';
import { messagesRoutes } from '../functions/messages/routes.js';
import { handler as threadsHandler } from '../functions/threads/handler.js';
import { threadsRoutes } from '../functions/threads/routes.js';
import { handler as uploadsHandler } from '../functions/uploads/handler.js';
import { uploadsRoutes } from '../functions/uploads/routes.js';
import { failIfArmed } from '../shared/db/core/faults.js';
import { claimIdempotencyKey, completeIdempotencyKey } from '../shared/db/idempotency.js';
import { IDEMPOTENCY_WINDOW_SECONDS } from '../shared/http/idempotency.js';
import { viewModeCountUpdate } from '../shared/db/markup-records.js';
import { recordIssuedUpload, UPLOAD_RECORD_TTL_SECONDS, uploadObjectKey } from '../shared/db/uploads.js';
import { pinOf } from '../shared/domain/comments/pins.js';
import { policyUsableUntilEpoch } from '../shared/storage/upload-policy.js';
import { getDb, getSqs } from '../shared/clients.js';
import { getConfig } from '../shared/config.js';
import { apiKeyKey } from '../shared/db/api-keys.js';
import { withBackoff } from '../shared/db/core/backoff.js';
import { isConditionFailure, isTransactionConflict } from '../shared/db/core/errors.js';
import { fromItem, itemKey, markupCommentUpdate, workspaceMarkupsPartition, type MarkupRecord } from '../shared/db/items.js';
import { planKey, savePlan, getPlan } from '../shared/db/plans.js';
import { toMessageItem, toMessageReferenceItem, type MessageRecord } from '../shared/db/messages.js';
import { readMarksUpdate } from '../shared/db/read-marks.js';
import { threadIndexStart, threadIndexWrites } from '../shared/db/thread-index.js';
import {
  nextThreadNumber,
  revisedThread,
  threadKey,
  threadReferenceKey,
  threadRevisionUpdate,
  toThreadItem,
  toThreadReferenceItem,
  type ThreadRecord,
} from '../shared/db/threads.js';
import { put, putNew, type TransactItem } from '../shared/db/core/transact.js';
import { usageKey, usagePeriod } from '../shared/db/usage.js';
import { userKey } from '../shared/db/users.js';
import { workspaceKey, getWorkspace } from '../shared/db/workspaces.js';
import { deltaOf } from '../shared/domain/comments/delta.js';
import { VIEW_MODES } from '../shared/domain/markups/view-modes.js';
import { createWorkspaceKey } from '../shared/domain/organizations/organizations.js';
import { depthOf, queueUrlOf } from '../infra/admin/queues.js';
import type { StackInfo } from '../infra/local/stack.js';
import { QUEUES, type QueueName } from '../shared/queues.js';
import { countRequests, invokeHandler, type Counted } from '../test/support/request-count.js';
import { BROWSER_CONTEXT } from '../test/support/threads.js';
import { benchClient } from './http-client.js';
import { formatRow, measure, measureInTurns, type Measurement } from './measure.js';
import { defaultThreadPageFloor } from './thread-pages.js';

export interface RequestBenchOptions {
  durationMs: number;
  concurrency: number;
  /** Only the rows whose name contains one of these (BENCH_ROWS); all when absent. */
  rows?: readonly string[];
}

/**
 * With more than one caller, each side's time (BENCH_SECONDS) is cut into this many windows, the
 * floor's and the request's in turns; one at a time they alternate call by call (`measureInTurns`).
 * Three windows a side with each side's best taken moved GET /workspace's c=1 ratio between 0.98x
 * and 1.52x from run to run of the same code; call by call, three runs gave 1.21x-1.26x.
 */
const ROUNDS = 10;

interface Scenario {
  name: string;
  /** The request through the local gateway. */
  request: () => Promise<void>;
  /** The DynamoDB calls that request needs, in the same order and parallelism, run directly. */
  floor: () => Promise<void>;
}

/**
 * Each scenario beside its floor: the DynamoDB calls the request cannot avoid, made directly against
 * the same DynamoDB Local. The ratio is what HTTP, the gateway, validation and the handler add.
 */
export async function benchRequests(stack: StackInfo, options: RequestBenchOptions): Promise<Measurement[]> {
  const rows = options.rows;
  const scenarios = (await prepare(stack)).filter((scenario) => !rows || rows.some((row) => scenario.name.includes(row)));
  const results: Measurement[] = [];
  for (const scenario of scenarios) {
    // What earlier scenarios left running in this process (queue workers, the stream fan-out) ends first.
    await settle();
    // DynamoDB Local's JVM needs a while to compile its hot paths; measuring before that flatters
    // whichever side runs second. Each scenario is warmed just before it is measured: warming all of
    // them first left the writes' background work running under the first rows (GET /workspace
    // measured 1.64x its floor after every warm-up, 1.30x after its own).
    await measure(
      'warm-up',
      async () => {
        await scenario.floor();
        await scenario.request();
      },
      { durationMs: Math.min(options.durationMs, 2000), concurrency: options.concurrency, warmup: 0 },
    );
    for (const concurrency of [1, options.concurrency]) {
      const [floor, request] = await measureInTurns(
        [
          { name: `floor of ${scenario.name} (c=${concurrency})`, operation: scenario.floor },
          { name: `${scenario.name} (c=${concurrency})`, operation: scenario.request },
        ],
        { durationMs: options.durationMs, concurrency, rounds: ROUNDS },
      );
      results.push(floor, request);
      process.stdout.write(`${formatRow(floor)}\n${formatRow(request)}\n`);
      process.stdout.write(
        `${'  ratio to floor'.padEnd(44)} p50 ${(request.p50 / floor.p50).toFixed(2)}x   p99 ${(request.p99 / floor.p99).toFixed(2)}x   throughput ${(floor.perSecond / request.perSecond).toFixed(2)}x\n\n`,
      );
    }
  }
  return results;
}

/** Waits (up to a minute) until no work queue of the local stack holds a message, visible or in flight. */
async function settle(): Promise<void> {
  const urls = (Object.keys(QUEUES) as QueueName[])
    .map((name) => queueUrlOf(getConfig(), name))
    .filter((url): url is string => url !== undefined);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const depths = await Promise.all(urls.map((url) => depthOf(getSqs(), url)));
    if (depths.every((depth) => depth.visible + depth.inFlight === 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  process.stdout.write('(the queues were still busy after a minute; measuring anyway)\n');
}

async function prepare(stack: StackInfo): Promise<Scenario[]> {
  const db = getDb();
  const TableName = getConfig().tableName;
  const keyId = stack.workspaceApiKey.split('_')[1]!;
  const workspace = (await getWorkspace(stack.workspaceId))!;
  const get = (Key: Record<string, string>) => db.send(new GetCommand({ TableName, Key }));
  const getConsistent = (Key: Record<string, string>) => db.send(new GetCommand({ TableName, Key, ConsistentRead: true }));
  // An event's place in its markup's log (issue 32): the transaction also moves the markup's head and
  // writes the log entry (under keys of the bench's own here). No head is read: the process that
  // moved a markup's head last remembers it, as the stack's one process does here.
  const eventLogFloorItems = (markupId: string): TransactItem[] => [
    {
      Update: {
        TableName,
        Key: { PK: `BENCH#${markupId}`, SK: 'EVENTSEQ' },
        UpdateExpression: 'ADD lastSeq :one',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
    put({ PK: `BENCH#${markupId}#EVENTS`, SK: randomUUID(), entity: 'BenchFloor' }),
  ];
  const headers = { Authorization: `Bearer ${stack.workspaceApiKey}`, 'Service-API-Version': '2023-02-22' };
  const userId = (await get(apiKeyKey(keyId))).Item!.userId as string;
  const authenticate = async () => {
    await get(apiKeyKey(keyId));
    await get(workspaceKey(stack.workspaceId));
  };
  const client = benchClient(stack.baseUrl, headers);
  const call = async (method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<void> => {
    await callText(method, path, body, extraHeaders);
  };
  const callText = async (method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<string> => {
    const response = await client.call(method, `/api/v2${path}`, body, extraHeaders);
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${response.body}`);
    return response.body;
  };
  /** A seeding call with any key that answers the `data` of the response. */
  const callData = async (key: string, method: string, path: string, body: unknown): Promise<{ id: string }> => {
    const response = await fetch(`${stack.baseUrl}/api/v2${path}`, {
      method,
      headers: { ...headers, Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { data: { id: string } }).data;
  };

  // No limits: the creates below and the bench's own (markups, upload reservations) must never meet one.
  await savePlan({ ...(await getPlan(workspace.organizationId)), markupLimit: null, storageLimitBytes: null });
  // The floor's SendMessage goes to a queue nobody consumes, so it costs what the request's does
  // without handing the renderer jobs for markups that do not exist.
  const floorQueueUrl = (await getSqs().send(new CreateQueueCommand({ QueueName: 'bench-floor' }))).QueueUrl!;
  for (let i = 0; i < 60; i += 1) await call('POST', '/markups/url', { url: `https://example.com/page-${i}` });

  // Threads: one markup with 50 threads of 3 messages by three authors for the list, and a pool of
  // markups with one thread each for replies, taken in turn so that concurrent replies (each a
  // transaction on its markup and thread) do not collide on one markup.
  const repliers = await Promise.all(
    ['second', 'third'].map(
      async (name) =>
        (await createWorkspaceKey(stack.workspaceId, { email: `bench-${name}-${randomUUID()}@example.com`, role: 'contributor' })).apiKey,
    ),
  );
  const newThread = (markupId: string) => callData(stack.workspaceApiKey, 'POST', '/threads', threadBody(markupId));
  const listMarkupId = (await callData(stack.workspaceApiKey, 'POST', '/markups/url', { url: 'https://example.com/threads' })).id;
  for (let i = 0; i < 50; i += 1) {
    const thread = await newThread(listMarkupId);
    for (const key of repliers)
      await callData(key, 'POST', `/threads/${thread.id}/messages`, {
        content: `Reply ${i}: the spacing under the hero differs from the design.`,
      });
  }
  const replyTargets: { markupId: string; threadId: string }[] = [];
  for (let i = 0; i < 32; i += 1) {
    const markupId = (await callData(stack.workspaceApiKey, 'POST', '/markups/url', { url: `https://example.com/replies-${i}` })).id;
    replyTargets.push({ markupId, threadId: (await newThread(markupId)).id });
  }
  let nextRequestTarget = 0;
  let nextFloorTarget = 0;
  const replyBody = { content: 'A bench reply' };

  const listThreads: Scenario = {
    name: 'GET /threads (page of 50)',
    request: () => call('GET', `/threads?markupId=${listMarkupId}&limit=50`),
    floor: () => defaultThreadPageFloor({ keyId, markupId: listMarkupId, workspaceId: stack.workspaceId, readerId: userId }),
  };
  const createMessage: Scenario = {
    name: 'POST /threads/:id/messages',
    request: () => {
      const target = replyTargets[nextRequestTarget++ % replyTargets.length]!;
      return call('POST', `/threads/${target.threadId}/messages`, replyBody);
    },
    floor: async () => {
      const target = replyTargets[nextFloorTarget++ % replyTargets.length]!;
      await get(apiKeyKey(keyId));
      // Read, then write on what was read: a write that lost to another writer of the thread (its
      // revision moved) reads again and retries, as the request does (fromFreshReads).
      await transactFromFreshReads(async () => {
        await getConsistent(threadReferenceKey(target.threadId));
        const markup = fromItem((await getConsistent(itemKey(target.markupId))).Item!) as MarkupRecord;
        await get(workspaceKey(stack.workspaceId));
        const thread = (await getConsistent(threadKey(target.markupId, target.threadId))).Item as ThreadRecord;
        const at = Date.now();
        const message = { ...replyRecord(markup, target.threadId, userId, replyBody.content, at), threadRevision: thread.revision + 1 };
        // One transaction: the change, the thread index's move (activity), the event's outbox item and its place in the markup's log.
        return [
          markupCommentUpdate(markup, { at, open: true }),
          threadRevisionUpdate(thread, at, { message: { put: message } }),
          putNew(toMessageItem(message)),
          putNew(
            toMessageReferenceItem({
              threadId: target.threadId,
              markupId: markup.id,
              workspaceId: markup.workspaceId,
              organizationId: markup.organizationId,
              messageId: message.id,
            }),
          ),
          readMarksUpdate(markup.id, [
            {
              userId,
              subject: 'message',
              subjectId: message.id,
              threadId: target.threadId,
              seenRevision: message.threadRevision,
              seenAt: at,
            },
          ]),
          ...threadIndexWrites(markup, thread, revisedThread(thread, at, { message: { put: message } })),
          put({
            PK: `BENCH#${stack.workspaceId}#EVENTS`,
            SK: `${new Date(at).toISOString()}#${message.id}`,
            entity: 'BenchFloor',
            type: 'comment_reply_created',
            markupId: markup.id,
            threadId: target.threadId,
            messageId: message.id,
          }),
          ...eventLogFloorItems(markup.id),
        ];
      });
      // Then the writer for the answer.
      await db.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: [userKey(userId)] } } }));
    },
  };
  // POST /threads on the reply markups, taken in turn (each creation is a transaction on its markup).
  let nextThreadRequest = 0;
  let nextThreadFloor = 0;
  const createThreadScenario: Scenario = {
    name: 'POST /threads',
    request: () => call('POST', '/threads', threadBody(replyTargets[nextThreadRequest++ % replyTargets.length]!.markupId)),
    floor: async () => {
      const { markupId } = replyTargets[nextThreadFloor++ % replyTargets.length]!;
      await get(apiKeyKey(keyId));
      // Read, then write on what was read: a number another creation took meanwhile reads again and retries.
      await transactFromFreshReads(async () => {
        const markup = fromItem((await getConsistent(itemKey(markupId))).Item!) as MarkupRecord;
        await get(workspaceKey(stack.workspaceId));
        const at = Date.now();
        const number = (await nextThreadNumber(markupId, threadIndexStart(markupId)))!;
        const body = threadBody(markupId);
        const threadId = randomUUID();
        const message = {
          ...replyRecord(markup, threadId, userId, 'The heading overlaps the navigation on this page.', at),
          threadRevision: 1,
        };
        const thread: ThreadRecord = {
          id: threadId,
          markupId,
          workspaceId: markup.workspaceId,
          organizationId: markup.organizationId,
          number,
          userId,
          createdAt: at,
          modifiedAt: at,
          lastActivityAt: at,
          resolved: false,
          priority: null,
          revision: 1,
          messageIds: [message.id],
          messages: [message],
          annotations: null,
          width: null,
          height: null,
          ...pinOf(markup, body as never, at),
        };
        const reference = { threadId, markupId, workspaceId: markup.workspaceId, organizationId: markup.organizationId };
        // One transaction: the markup's counters, the thread, its message, both references, the writer's
        // read marks, the view mode's count, the thread index, the event's outbox item and its place in the markup's log.
        return [
          markupCommentUpdate(markup, { at, activeDelta: 1, open: true }),
          putNew(toThreadItem(thread)),
          putNew(toThreadReferenceItem(reference)),
          putNew(toMessageItem(message)),
          putNew(toMessageReferenceItem({ ...reference, messageId: message.id })),
          readMarksUpdate(markupId, [
            { userId, subject: 'thread', subjectId: threadId, threadId, seenRevision: 1, seenAt: at },
            { userId, subject: 'message', subjectId: message.id, threadId, seenRevision: 1, seenAt: at },
          ]),
          ...(thread.viewModeId ? [viewModeCountUpdate(markupId, thread.viewModeId, 1)] : []),
          ...threadIndexWrites(markup, undefined, thread),
          put({
            PK: `BENCH#${stack.workspaceId}#EVENTS`,
            SK: `${new Date(at).toISOString()}#${threadId}`,
            entity: 'BenchFloor',
            type: 'comment_created',
            markupId,
            threadId,
            messageId: message.id,
          }),
          ...eventLogFloorItems(markupId),
        ];
      });
      // The local stack's test fault point (a deployed function skips it), then the writer for the answer.
      await failIfArmed('after-thread-commit', markupId);
      await db.send(new BatchGetCommand({ RequestItems: { [TableName]: { Keys: [userKey(userId)] } } }));
    },
  };
  const uploadBody = {
    resourceType: 'markup_asset',
    resourceId: workspace.rootFolderId,
    filename: 'photo.png',
    contentType: 'image/png',
    filesize: 1_000_000,
  };
  const issueUploadPolicyScenario: Scenario = {
    name: 'POST /uploads/upload-policy',
    request: () => call('POST', '/uploads/upload-policy', uploadBody),
    floor: async () => {
      await get(apiKeyKey(keyId));
      await get(itemKey(workspace.rootFolderId));
      await get(workspaceKey(stack.workspaceId));
      const plan = await getPlan(workspace.organizationId);
      const now = new Date();
      const fileId = randomUUID();
      // The upload record and its reservation, under the plan's storage limit: one transaction.
      await recordIssuedUpload(
        {
          fileId,
          workspaceId: stack.workspaceId,
          organizationId: workspace.organizationId,
          resourceType: 'markup_asset',
          resourceId: workspace.rootFolderId,
          key: uploadObjectKey(stack.workspaceId, fileId, uploadBody.filename),
          filename: uploadBody.filename,
          contentType: uploadBody.contentType,
          filesize: uploadBody.filesize,
          state: 'issued',
          uploadedBy: userId,
          createdAt: now.toISOString(),
          expiresAtEpoch: Math.floor(now.getTime() / 1000) + UPLOAD_RECORD_TTL_SECONDS,
          reservedBytes: uploadBody.filesize,
          reservedUntilEpoch: policyUsableUntilEpoch(now),
        },
        plan.storageLimitBytes,
      );
    },
  };
  // A floor is only a floor if it makes the request's calls: count both in this process, the
  // request handed to its handler here (through the gateway its calls cannot be told apart from
  // background work). The list is asked once first so the handler holds the cursor key, as it does
  // once warm.
  await listThreads.request();
  const threads = { name: 'threads', routes: threadsRoutes, handler: threadsHandler };
  const messages = { name: 'messages', routes: messagesRoutes, handler: messagesHandler };
  const key = stack.workspaceApiKey;
  await requireSameCalls(
    listThreads.name,
    () => invokeHandler(threads, 'GET', '/threads', { key, query: { markupId: listMarkupId, limit: 50 } }),
    listThreads.floor,
  );
  await requireSameCalls(
    createMessage.name,
    () => invokeHandler(messages, 'POST', `/threads/${replyTargets[0]!.threadId}/messages`, { key, body: replyBody }),
    createMessage.floor,
  );
  await requireSameCalls(
    createThreadScenario.name,
    () => invokeHandler(threads, 'POST', '/threads', { key, body: threadBody(replyTargets[0]!.markupId) }),
    createThreadScenario.floor,
  );
  const uploads = { name: 'uploads', routes: uploadsRoutes, handler: uploadsHandler };
  await requireSameCalls(
    issueUploadPolicyScenario.name,
    () => invokeHandler(uploads, 'POST', '/uploads/upload-policy', { key, body: uploadBody }),
    issueUploadPolicyScenario.floor,
  );

  // POST /markups/url's writes after authentication: the folder, the plan and the month's usage,
  // the charge, the markup and its event in one transaction, then the thumbnail job and the activity.
  const urlMarkupWrites = async () => {
    await get(itemKey(workspace.rootFolderId));
    const period = usagePeriod(new Date()).key;
    await Promise.all([get(planKey(workspace.organizationId)), get(usageKey(stack.workspaceId, period))]);
    const id = randomUUID();
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName,
              Key: usageKey(`bench-${stack.workspaceId}`, period),
              UpdateExpression: 'ADD used :one',
              ExpressionAttributeValues: { ':one': 1 },
            },
          },
          { Put: { TableName, Item: { ...itemKey(id), entity: 'BenchFloor', id }, ConditionExpression: 'attribute_not_exists(PK)' } },
          { Put: { TableName, Item: { PK: `BENCH#${stack.workspaceId}#EVENTS`, SK: `${Date.now()}#${id}`, entity: 'BenchFloor' } } },
        ],
      }),
    );
    const touch = (Key: Record<string, string>) =>
      db.send(
        new UpdateCommand({
          TableName,
          Key,
          UpdateExpression: 'SET benchTouchedAt = :at',
          ExpressionAttributeValues: { ':at': Date.now() },
        }),
      );
    await Promise.all([
      getSqs().send(
        new SendMessageCommand({ QueueUrl: floorQueueUrl, MessageBody: JSON.stringify({ type: 'render-thumbnail', markupId: id }) }),
      ),
      touch({ PK: `BENCH#${workspace.rootFolderId}`, SK: 'ITEM' }),
      touch({ PK: `BENCH#${stack.workspaceId}`, SK: 'WS' }),
    ]);
  };
  // Idempotency-Key: a new key per request (the claim before the operation and the stored response
  // after it), and one key sent again and again (the replay: the claim's failed condition hands the
  // stored response back). The floors make the same table calls under a scope of their own.
  const urlMarkupBody = { url: 'https://example.com/bench' };
  const replayKey = `bench-replay-${randomUUID()}`;
  const storedReply = await callText('POST', '/markups/url', urlMarkupBody, { 'Idempotency-Key': replayKey });
  const floorScope = `BENCH#${randomUUID()}`;
  const claimForFloor = (key: string, token: string) => {
    const now = Date.now();
    return claimIdempotencyKey(
      floorScope,
      key,
      {
        routeKey: 'POST /api/v2/markups/url',
        fingerprint: 'bench',
        token,
        lockedUntil: now + 30_000,
        expiresAtEpoch: Math.floor(now / 1000) + IDEMPOTENCY_WINDOW_SECONDS,
      },
      now,
    );
  };
  await claimForFloor(replayKey, 'bench');
  await completeIdempotencyKey(floorScope, replayKey, 'bench', JSON.stringify({ status: 200, body: JSON.parse(storedReply) }));

  const createUrlMarkup: Scenario = {
    name: 'POST /markups/url',
    request: () => call('POST', '/markups/url', urlMarkupBody),
    floor: async () => {
      await authenticate();
      await urlMarkupWrites();
    },
  };
  const createUrlMarkupWithKey: Scenario = {
    name: 'POST /markups/url +Idempotency-Key',
    request: () => call('POST', '/markups/url', urlMarkupBody, { 'Idempotency-Key': randomUUID() }),
    floor: async () => {
      // The key is claimed right after the API key is read, before the workspace.
      await get(apiKeyKey(keyId));
      const key = randomUUID();
      await claimForFloor(key, key);
      await get(workspaceKey(stack.workspaceId));
      await urlMarkupWrites();
      await completeIdempotencyKey(floorScope, key, key, storedReply);
    },
  };
  // A replay is answered from the claim's failed condition, before the workspace is read.
  const replayUrlMarkup: Scenario = {
    name: 'POST /markups/url replayed key',
    request: () => call('POST', '/markups/url', urlMarkupBody, { 'Idempotency-Key': replayKey }),
    floor: async () => {
      await get(apiKeyKey(keyId));
      await claimForFloor(replayKey, 'bench');
    },
  };
  const markups = { name: 'markups', routes: markupsRoutes, handler: markupsHandler };
  await requireSameCalls(
    createUrlMarkup.name,
    () => invokeHandler(markups, 'POST', '/markups/url', { key, body: urlMarkupBody }),
    createUrlMarkup.floor,
  );
  await requireSameCalls(
    createUrlMarkupWithKey.name,
    () => invokeHandler(markups, 'POST', '/markups/url', { key, body: urlMarkupBody, headers: { 'Idempotency-Key': randomUUID() } }),
    createUrlMarkupWithKey.floor,
  );
  await requireSameCalls(
    replayUrlMarkup.name,
    () => invokeHandler(markups, 'POST', '/markups/url', { key, body: urlMarkupBody, headers: { 'Idempotency-Key': replayKey } }),
    replayUrlMarkup.floor,
  );

  return [
    {
      name: 'GET /workspace',
      request: () => call('GET', '/workspace'),
      floor: authenticate,
    },
    {
      name: 'GET /markups (page of 50)',
      request: () => call('GET', '/markups?limit=50'),
      floor: async () => {
        await authenticate();
        await Promise.all([
          get(planKey(workspace.organizationId)),
          db.send(
            new QueryCommand({
              TableName,
              IndexName: 'GSI4',
              KeyConditionExpression: 'GSI4PK = :pk',
              ExpressionAttributeValues: { ':pk': workspaceMarkupsPartition(stack.workspaceId) },
              ScanIndexForward: false,
              Limit: 51,
            }),
          ),
        ]);
      },
    },
    // Before POST /markups/url: the thumbnail jobs of the markups it creates run in this process
    // for a while after it, and would weigh on whichever scenario followed.
    listThreads,
    createMessage,
    createThreadScenario,
    issueUploadPolicyScenario,
    createUrlMarkup,
    createUrlMarkupWithKey,
    replayUrlMarkup,
  ];
}

/** A webpage thread's create body: one element on the page, desktop view mode. */
export function threadBody(markupId: string): Record<string, unknown> {
  return {
    projectId: markupId,
    isImageThread: false,
    url: 'https://example.com/threads',
    canonicalUrl: 'https://example.com/threads',
    elements: [{ elementPath: 'html > body > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 }],
    elementParents: [{ url: 'https://example.com/threads', canonicalUrl: 'https://example.com/threads', path: 'html > body', depth: 1 }],
    offsetXPercentage: 25,
    offsetYPercentage: 40,
    message: { ops: [{ insert: 'The heading overlaps the navigation on this page.\n' }] },
    browserContext: BROWSER_CONTEXT,
    viewModeId: VIEW_MODES.find((mode) => mode.category === 'desktop')!.id,
  };
}

/** The message record a plain-text reply stores. */
function replyRecord(markup: MarkupRecord, threadId: string, userId: string, content: string, at: number): MessageRecord {
  return {
    id: randomUUID(),
    threadId,
    markupId: markup.id,
    workspaceId: markup.workspaceId,
    organizationId: markup.organizationId,
    userId,
    createdAt: at,
    modifiedAt: at,
    modifiedBy: userId,
    threadRevision: 1,
    content,
    delta: deltaOf(content),
    mentionIds: [],
    attachments: [],
    clipVideos: [],
  };
}

/**
 * A transaction built from reads, read and built again while it collides with another one or a
 * condition on what it read failed (a concurrent writer moved it), as the request's fromFreshReads does.
 */
async function transactFromFreshReads(build: () => Promise<TransactItem[]>): Promise<void> {
  await withBackoff(
    async () => {
      await getDb().send(new TransactWriteCommand({ TransactItems: await build() }));
    },
    {
      attempts: 21,
      baseMs: 10,
      capMs: 250,
      retryOn: (error) => error instanceof TransactionCanceledException && (isTransactionConflict(error) || isConditionFailure(error)),
    },
  );
}

/** Fails the bench when a floor makes other DynamoDB calls than its request, or in another order; prints the calls when they match. */
async function requireSameCalls(
  name: string,
  request: () => Promise<{ status: number; body: unknown }>,
  floor: () => Promise<void>,
): Promise<void> {
  const byRequest = await countRequests(request);
  if (byRequest.result.status !== 200)
    throw new Error(`${name} answered ${byRequest.result.status}: ${JSON.stringify(byRequest.result.body)}`);
  const byFloor = await countRequests(floor);
  // The calls in the order they were sent, runs of one command counted: "GetItem 5, Query 2, …".
  const describe = (counted: Counted<unknown>) => {
    const runs: [string, number][] = [];
    for (const { command } of counted.calls) {
      const name = command.replace(/Command$/, '');
      const last = runs.at(-1);
      if (last?.[0] === name) last[1] += 1;
      else runs.push([name, 1]);
    }
    return runs.map(([name, count]) => `${name} ${count}`).join(', ');
  };
  if (describe(byRequest) !== describe(byFloor))
    throw new Error(`The floor of ${name} makes ${describe(byFloor)}; the request makes ${describe(byRequest)}.`);
  process.stdout.write(`${name}: ${byRequest.total} DynamoDB calls per request, the floor the same (${describe(byRequest)})\n`);
}
