import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CreateQueueCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { getDb, getSqs } from '../shared/clients.js';
import { getConfig } from '../shared/config.js';
import { apiKeyKey } from '../shared/db/api-keys.js';
import { itemKey, workspaceMarkupsPartition } from '../shared/db/items.js';
import { planKey, savePlan, getPlan } from '../shared/db/plans.js';
import { usageKey, usagePeriod } from '../shared/db/usage.js';
import { memberKey } from '../shared/db/users.js';
import { workspaceKey, getWorkspace } from '../shared/db/workspaces.js';
import type { StackInfo } from '../infra/local/stack.js';
import { formatRow, measure, type Measurement } from './measure.js';

export interface RequestBenchOptions {
  durationMs: number;
  concurrency: number;
}

const ROUNDS = 3;

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
  const scenarios = await prepare(stack);
  // DynamoDB Local's JVM needs a while to compile its hot paths; measuring before that flatters
  // whichever side runs second. Warm every scenario, then take each side's best of ROUNDS runs.
  for (const scenario of scenarios) {
    await measure('warm-up', async () => {
      await scenario.floor();
      await scenario.request();
    }, { durationMs: Math.min(options.durationMs, 2000), concurrency: options.concurrency, warmup: 0 });
  }
  const results: Measurement[] = [];
  for (const scenario of scenarios) {
    for (const concurrency of [1, options.concurrency]) {
      // Alternate the two sides in ROUNDS short runs, so a burst of background work (pollers,
      // DynamoDB Local's JVM) does not land on one side only.
      const settings = { durationMs: options.durationMs / ROUNDS, concurrency };
      const floors: Measurement[] = [];
      const requests: Measurement[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        floors.push(await measure(`floor of ${scenario.name} (c=${concurrency})`, scenario.floor, settings));
        requests.push(await measure(`${scenario.name} (c=${concurrency})`, scenario.request, settings));
      }
      const floor = best(floors);
      const request = best(requests);
      results.push(floor, request);
      process.stdout.write(`${formatRow(floor)}\n${formatRow(request)}\n`);
      process.stdout.write(
        `${'  ratio to floor'.padEnd(44)} p50 ${(request.p50 / floor.p50).toFixed(2)}x   p99 ${(request.p99 / floor.p99).toFixed(2)}x   throughput ${(floor.perSecond / request.perSecond).toFixed(2)}x\n\n`,
      );
    }
  }
  return results;
}

async function prepare(stack: StackInfo): Promise<Scenario[]> {
  const db = getDb();
  const TableName = getConfig().tableName;
  const keyId = stack.workspaceApiKey.split('_')[1]!;
  const workspace = (await getWorkspace(stack.workspaceId))!;
  const get = (Key: Record<string, string>) => db.send(new GetCommand({ TableName, Key }));
  const headers = { Authorization: `Bearer ${stack.workspaceApiKey}`, 'Service-API-Version': '2023-02-22' };
  const userId = (await get(apiKeyKey(keyId))).Item!.userId as string;
  const authenticate = async () => {
    await get(apiKeyKey(keyId));
    await get(workspaceKey(stack.workspaceId));
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.baseUrl}/api/v2${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
  };

  await savePlan({ ...(await getPlan(workspace.organizationId)), markupLimit: null });
  // The floor's SendMessage goes to a queue nobody consumes, so it costs what the request's does
  // without handing the renderer jobs for markups that do not exist.
  const floorQueueUrl = (await getSqs().send(new CreateQueueCommand({ QueueName: 'bench-floor' }))).QueueUrl!;
  for (let i = 0; i < 60; i += 1) await call('POST', '/markups/url', { url: `https://example.com/page-${i}` });

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
          get(memberKey(stack.workspaceId, userId)),
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
    {
      name: 'POST /markups/url',
      request: () => call('POST', '/markups/url', { url: 'https://example.com/bench' }),
      floor: async () => {
        await authenticate();
        await get(itemKey(workspace.rootFolderId));
        const period = usagePeriod(new Date()).key;
        await Promise.all([get(planKey(workspace.organizationId)), get(usageKey(stack.workspaceId, period))]);
        const id = randomUUID();
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              { Update: { TableName, Key: usageKey(`bench-${stack.workspaceId}`, period), UpdateExpression: 'ADD used :one', ExpressionAttributeValues: { ':one': 1 } } },
              { Put: { TableName, Item: { ...itemKey(id), entity: 'BenchFloor', id }, ConditionExpression: 'attribute_not_exists(PK)' } },
            ],
          }),
        );
        // After the transaction the request queues the thumbnail, records markup_created and moves
        // the folder's and workspace's activity, all at once.
        const touch = (Key: Record<string, string>) =>
          db.send(new UpdateCommand({ TableName, Key, UpdateExpression: 'SET benchTouchedAt = :at', ExpressionAttributeValues: { ':at': Date.now() } }));
        await Promise.all([
          getSqs().send(new SendMessageCommand({ QueueUrl: floorQueueUrl, MessageBody: JSON.stringify({ type: 'render-thumbnail', markupId: id }) })),
          db.send(new PutCommand({ TableName, Item: { PK: `BENCH#${stack.workspaceId}#EVENTS`, SK: `${Date.now()}#${id}`, entity: 'BenchFloor' } })),
          touch({ PK: `BENCH#${workspace.rootFolderId}`, SK: 'ITEM' }),
          touch({ PK: `BENCH#${stack.workspaceId}`, SK: 'WS' }),
        ]);
      },
    },
  ];
}

/** The run with the lower median: noise on this shared machine only ever slows a run down. */
function best(runs: Measurement[]): Measurement {
  return runs.reduce((a, b) => (b.p50 < a.p50 ? b : a));
}
