import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getDb } from '../shared/clients.js';
import { getConfig } from '../shared/config.js';
import { apiKeyKey } from '../shared/db/api-keys.js';
import { workspaceKey } from '../shared/db/workspaces.js';
import type { StackInfo } from '../infra/local/stack.js';
import { formatRow, measure, type Measurement } from './measure.js';

export interface RequestBenchOptions {
  durationMs: number;
  concurrency: number;
}

/**
 * GET /workspace against the DynamoDB calls it needs: authenticating the key (GetItem) and reading
 * the workspace (GetItem), one after the other. The floor runs those two GetItems directly against
 * the same DynamoDB Local, so the ratio is what the HTTP layer, the gateway and the handler add.
 */
export async function benchGetWorkspace(stack: StackInfo, options: RequestBenchOptions): Promise<Measurement[]> {
  const keyId = stack.workspaceApiKey.split('_')[1]!;
  const TableName = getConfig().tableName;
  const db = getDb();
  const headers = { Authorization: `Bearer ${stack.workspaceApiKey}`, 'Service-API-Version': '2023-02-22' };
  const url = `${stack.baseUrl}/api/v2/workspace`;

  const floorCall = async () => {
    await db.send(new GetCommand({ TableName, Key: apiKeyKey(keyId) }));
    await db.send(new GetCommand({ TableName, Key: workspaceKey(stack.workspaceId) }));
  };
  const requestCall = async () => {
    const response = await fetch(url, { headers });
    if (response.status !== 200) throw new Error(`GET /workspace answered ${response.status}`);
    await response.arrayBuffer();
  };
  // DynamoDB Local's JVM needs a while to compile its hot paths; measuring before that flatters
  // whichever side runs second. Warm both, then take each side's better of two interleaved runs.
  await measure('warm-up', async () => {
    await floorCall();
    await requestCall();
  }, { durationMs: Math.min(options.durationMs, 3000), concurrency: options.concurrency, warmup: 0 });

  const results: Measurement[] = [];
  for (const concurrency of [1, options.concurrency]) {
    const settings = { durationMs: options.durationMs / 2, concurrency };
    const floors = [await measure(`floor: 2 x GetItem (c=${concurrency})`, floorCall, settings)];
    const requests = [await measure(`GET /workspace (c=${concurrency})`, requestCall, settings)];
    floors.push(await measure(`floor: 2 x GetItem (c=${concurrency})`, floorCall, settings));
    requests.push(await measure(`GET /workspace (c=${concurrency})`, requestCall, settings));
    const floor = best(floors);
    const request = best(requests);
    results.push(floor, request);
    process.stdout.write(`${formatRow(floor)}\n${formatRow(request)}\n`);
    process.stdout.write(
      `${'  ratio to floor'.padEnd(44)} p50 ${(request.p50 / floor.p50).toFixed(2)}x   p99 ${(request.p99 / floor.p99).toFixed(2)}x   throughput ${(floor.perSecond / request.perSecond).toFixed(2)}x\n\n`,
    );
  }
  return results;
}

/** The run with the lower median: noise on this shared machine only ever slows a run down. */
function best(runs: Measurement[]): Measurement {
  return runs.reduce((a, b) => (b.p50 < a.p50 ? b : a));
}
