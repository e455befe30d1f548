import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { S3Event } from 'aws-lambda';
import { entryOf, FUNCTIONS, type FunctionDefinition } from '../../functions/registry.js';
import { resetClients } from '../../shared/clients.js';
import { DEAD_LETTER_HOLD_URL_ENV, DEAD_LETTER_URL_ENV, ENV, QUEUE_URL_ENV, resetConfig } from '../../shared/config.js';
import { resetLogger } from '../../shared/logger.js';
import { resetMetrics } from '../../shared/metrics.js';
import { forgetExchangeKeys, newKeyDocument, parseKeyDocument } from '../../shared/auth/exchange-keys.js';
import { ghostscriptModuleUrl, useLocalFfmpeg } from '../../shared/convert/packages.js';
import { forgetCursorKey } from '../../shared/db/core/cursor-keys.js';
import { installFaultHook, takeArmedFault } from '../../shared/db/core/faults.js';
import { getOrganization } from '../../shared/db/organizations.js';
import { UPLOAD_PREFIX } from '../../shared/db/uploads.js';
import { addVerifiedMember, createOrganization } from '../../shared/domain/organizations/organizations.js';
import { maxConcurrencyOf, QUEUES, type QueueName } from '../../shared/queues.js';
import { ensureTable, startDynamoDbLocal } from './dynamodb.js';
import { startStreamPump, type StreamHandler, type StreamPump } from './dynamodb-streams.js';
import { startLocalFfmpeg, type LocalFfmpegBuild, type LocalFfmpegOptions } from './ffmpeg.js';
import { startGateway, type GatewayTarget, type HttpHandler } from './gateway.js';
import { LIVE_PATH, startLiveSockets, type LiveSockets, type SocketHandler } from './live-sockets.js';
import { useLocalLiveTransport } from '../../shared/domain/live/transport.js';
import { startLocalS3 } from './s3.js';
import { startSchedule, type ScheduledHandler } from './schedules.js';
import { createQueuePair, startPoller, startSqs, wakeOnArrival, type Poller, type QueuePair, type SqsHandler } from './sqs.js';
import { startSqsFront } from './sqs-front.js';
import { queueNameOf } from './sqs-requests.js';

/** DESIGN.md's public contract: what `DATA_DIR/stack.json` holds. */
export interface StackInfo {
  baseUrl: string;
  organizationId: string;
  workspaceId: string;
  organizationApiKey: string;
  workspaceApiKey: string;
}

/** Where the emulators listen, for the admin CLI, `npm run invoke` and tests (`DATA_DIR/services.json`). */
export interface ServicesInfo {
  region: string;
  tableName: string;
  bucketName: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** `ses`: the SES v2 emulator (aws-ses-v2-local); its `GET /store` lists the emails it received. */
  endpoints: { dynamodb: string; s3: string; sqs: string; ses: string };
  queues: Record<QueueName, QueuePair>;
  /** The exchange-token signing keys of this DATA_DIR (made on first start; never in the repository). */
  exchangeKeysFile: string;
  pid: number;
}

export interface LocalStackOptions {
  port: number;
  dataDir: string;
  memory: boolean;
  log?: (line: string) => void;
  /** Where the conversion worker's ffmpeg comes from when it is not built yet (tests stand in a build of their own). */
  ffmpeg?: LocalFfmpegOptions;
}

export interface LocalStack {
  stack: StackInfo;
  services: ServicesInfo;
  dataDir: string;
  /** The ffmpeg build this start began (ffmpeg was missing, or built by an older script); undefined when there was none. */
  ffmpegBuild: LocalFfmpegBuild['building'];
  /** Fault injection for in-process tests only (never reachable over HTTP). */
  faults: LocalFaults;
  stop(): Promise<void>;
}

export interface LocalFaults {
  /** Makes the SQS endpoint (the front every client uses) refuse connections, or take them again. */
  setQueuesReachable(reachable: boolean): void;
}

export const LOCAL_TABLE = 'review-board';
export const LOCAL_BUCKET = 'review-board-uploads';
const REGION = 'us-east-1';
/**
 * Fixed emulator credentials (s3rver's built-in pair, which it insists on); they only ever sign
 * requests to the emulators on loopback.
 */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/**
 * The From address of emails the local stack sends: a reserved `.localhost` name, so nothing the
 * emulator might forward could reach a real domain.
 */
export const LOCAL_EMAIL_SENDER = 'invitations@review-board.localhost';

/** The member the local stack seeds in its workspace (role owner), who signs in to the review app by email link. */
export const LOCAL_OWNER_EMAIL = 'owner@review-board.localhost';

export const stackFile = (dataDir: string) => join(dataDir, 'stack.json');
export const servicesFile = (dataDir: string) => join(dataDir, 'services.json');

/** Points this process's AWS clients and config at the emulators. */
export function useLocalServices(services: Omit<ServicesInfo, 'pid'>): void {
  Object.assign(process.env, {
    AWS_REGION: services.region,
    AWS_ACCESS_KEY_ID: services.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: services.credentials.secretAccessKey,
    [ENV.tableName]: services.tableName,
    [ENV.bucketName]: services.bucketName,
    [ENV.dynamodbEndpoint]: services.endpoints.dynamodb,
    [ENV.s3Endpoint]: services.endpoints.s3,
    [ENV.sqsEndpoint]: services.endpoints.sqs,
    // A services.json written before the SES emulator existed has no `ses`: then no endpoint (not "undefined").
    ...(services.endpoints.ses ? { [ENV.sesEndpoint]: services.endpoints.ses } : {}),
    [ENV.emailSender]: LOCAL_EMAIL_SENDER,
    ...Object.fromEntries((Object.keys(QUEUE_URL_ENV) as QueueName[]).map((name) => [QUEUE_URL_ENV[name], services.queues[name].url])),
    ...Object.fromEntries(
      Object.entries(DEAD_LETTER_URL_ENV).map(([name, env]) => [env, services.queues[name as QueueName].deadLetterUrl]),
    ),
    // A services.json written before the hold queues existed has none: then no variable (not "undefined").
    ...Object.fromEntries(
      Object.entries(DEAD_LETTER_HOLD_URL_ENV).flatMap(([name, env]) => {
        const url = services.queues[name as QueueName].deadLetterHoldUrl;
        return url ? [[env, url]] : [];
      }),
    ),
    [ENV.exchangeKeysFile]: services.exchangeKeysFile,
    [ENV.stackMode]: 'local',
    // The optional EPS converter (AGPL-3.0) is on wherever a developer installed it (`npm run converters:eps`).
    ...(ghostscriptModuleUrl() ? { [ENV.epsConverter]: 'ghostscript' } : {}),
    // The SDK's notice about the Node version is for deployments, not for local tooling (which may run on an older Node).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // Metrics (EMF lines) only where CloudWatch reads them, unless a developer asks for them here.
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
  });
  delete process.env.AWS_PROFILE;
  delete process.env.AWS_SESSION_TOKEN;
  resetConfig();
  resetClients();
  forgetCursorKey();
  forgetExchangeKeys();
  resetLogger();
  resetMetrics();
  // The fault points of the crash tests (shared/db/core/faults.ts): only a process pointed at the local stack reads FAULT records.
  installFaultHook(takeArmedFault);
}

/**
 * The exchange-token key of a DATA_DIR (a P-256 private JWK): generated once and kept (tokens
 * outlive a restart, as they would a deploy); a MEMORY=1 stack makes a new one every start, and so
 * does a DATA_DIR holding no usable key (the HS256 secret of older versions). Owner-readable only.
 */
const exchangeKeysFile = (dataDir: string) => join(dataDir, 'exchange-keys.json');

function ensureExchangeKeys(dataDir: string, memory: boolean): string {
  const file = exchangeKeysFile(dataDir);
  if (memory || !holdsKey(file)) writeFileSync(file, `${newKeyDocument()}\n`, { mode: 0o600 });
  return file;
}

function holdsKey(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    parseKeyDocument(readFileSync(file, 'utf8'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts DynamoDB Local, s3rver behind the policy-enforcing front, local-aws-sqs with the pollers,
 * aws-ses-v2-local and the gateway, all on 127.0.0.1. Handlers run in this process from the same modules Lambda runs.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  // The SDK's notice about the Node version is for deployments, not for local tooling (which may run on an older Node).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const log = options.log ?? (() => undefined);
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const s3Dir = options.memory ? mkdtempSync(join(tmpdir(), 'review-board-s3-')) : join(dataDir, 's3');
  const stoppers: (() => Promise<void>)[] = [];
  // ffmpeg builds while the emulators start; a video converted before it is done waits for it.
  const ffmpeg = startLocalFfmpeg(options.ffmpeg ?? {}, log);
  useLocalFfmpeg(ffmpeg);
  const stop = async () => {
    // First, so a video waiting for the build lets its worker stop (its job is retried on the next start).
    await ffmpeg.stop();
    useLocalFfmpeg(undefined);
    for (const stopOne of stoppers.reverse()) await stopOne().catch(() => undefined);
    stoppers.length = 0;
    if (options.memory) {
      rmSync(s3Dir, { recursive: true, force: true });
      // Written for the tools that attach while it runs; in memory, nothing outlives the stack (the signing key included).
      for (const file of [exchangeKeysFile(dataDir), servicesFile(dataDir), stackFile(dataDir)]) rmSync(file, { force: true });
    }
  };
  try {
    // S3 notifies the uploads queue of objects created under the upload prefix (its notification's filter).
    const uploadNotifications: { send?: (event: S3Event) => Promise<void> } = {};
    // Imported here, not at the top: the admin CLI and `npm run invoke` load this module too and never start it.
    const { startSes } = await import('./ses.js');
    const [dynamodb, sqs, ses, s3] = await Promise.all([
      startDynamoDbLocal({ dataDir: options.memory ? undefined : join(dataDir, 'dynamodb') }),
      // Without MEMORY=1 the queues are journaled in DATA_DIR: a restart (even after kill -9) gets back every message.
      startSqs(
        REGION,
        options.memory ? {} : { journalFile: join(dataDir, 'sqs-journal.jsonl'), onError: (error) => log(`sqs journal: ${String(error)}`) },
      ),
      startSes(),
      startLocalS3({
        directory: s3Dir,
        bucket: LOCAL_BUCKET,
        region: REGION,
        credentials: CREDENTIALS,
        onObjectCreated: async (event) => {
          const key = event.Records[0]?.s3.object.key ?? '';
          if (uploadNotifications.send && key.startsWith(UPLOAD_PREFIX)) await uploadNotifications.send(event);
        },
      }),
    ]);
    stoppers.push(dynamodb.stop, sqs.stop, ses.stop, s3.stop);
    // Every SQS client (handlers, pollers, tools reading services.json) goes through the front, so a
    // test can cut the queues off, and so a send wakes the idle poller of its queue (by queue name;
    // a request naming no queue wakes them all), at once and again when a delay ends.
    const pollers = new Map<string, Poller>();
    const sqsFront = await startSqsFront(sqs.endpoint, { onArrival: wakeOnArrival(pollers) });
    stoppers.push(sqsFront.close);
    log(`dynamodb ${dynamodb.endpoint}, s3 ${s3.endpoint}, sqs ${sqsFront.url}, ses ${ses.endpoint}`);

    const sqsClient = new SQSClient({ region: REGION, endpoint: sqsFront.url, credentials: CREDENTIALS });
    stoppers.push(async () => sqsClient.destroy());
    const queues = {} as Record<QueueName, QueuePair>;
    for (const [name, definition] of Object.entries(QUEUES) as [QueueName, (typeof QUEUES)[QueueName]][]) {
      queues[name] = await createQueuePair(sqsClient, definition.id, definition);
    }
    uploadNotifications.send = async (event) => {
      await sqsClient.send(new SendMessageCommand({ QueueUrl: queues.uploads.url, MessageBody: JSON.stringify(event) }));
    };
    const services: ServicesInfo = {
      region: REGION,
      tableName: LOCAL_TABLE,
      bucketName: LOCAL_BUCKET,
      credentials: CREDENTIALS,
      endpoints: { dynamodb: dynamodb.endpoint, s3: s3.endpoint, sqs: sqsFront.url, ses: ses.endpoint },
      queues,
      exchangeKeysFile: ensureExchangeKeys(dataDir, options.memory),
      pid: process.pid,
    };
    useLocalServices(services);
    const ddbClient = new DynamoDBClient({ region: REGION, endpoint: dynamodb.endpoint, credentials: CREDENTIALS });
    await ensureTable(ddbClient, LOCAL_TABLE);
    ddbClient.destroy();

    const loaded = await Promise.all(FUNCTIONS.map(async (definition) => ({ definition, handler: await loadHandler(definition) })));
    const targets: GatewayTarget[] = [];
    // The live-update socket (API Gateway's WebSocket API deployed): upgraded on the gateway's own port.
    let liveSockets: LiveSockets | undefined;
    // Handlers that may have written wake the stream pump, which otherwise slows down when the stream is quiet.
    const pumps: StreamPump[] = [];
    const wakePumps = () => {
      for (const pump of pumps) pump.wake();
    };
    for (const { definition, handler } of loaded) {
      if (definition.kind === 'api') {
        const { name, routes, isDefault, answersPreflight } = definition;
        targets.push({ name, routes, isDefault, answersPreflight, handler: handler as HttpHandler });
      }
      if (definition.kind === 'sqs') {
        const pair = queues[definition.queue];
        const source = definition.deadLetters ? { url: pair.deadLetterUrl, arn: pair.deadLetterArn } : pair;
        const poller: Poller = startPoller(sqsClient, source, handler as SqsHandler, {
          batchSize: QUEUES[definition.queue].batchSize,
          concurrency: maxConcurrencyOf(definition.queue),
          region: REGION,
          onBatch: wakePumps,
          onError: (error) => log(`poller ${definition.name}: ${String(error)}`),
        });
        pollers.set(queueNameOf(source.url) ?? source.url, poller);
        stoppers.push(poller.stop);
      }
      if (definition.kind === 'websocket') {
        liveSockets = startLiveSockets(handler as SocketHandler, (error) => log(`live ${definition.name}: ${String(error)}`));
        useLocalLiveTransport(liveSockets.transport);
        stoppers.push(async () => useLocalLiveTransport(undefined));
      }
      if (definition.kind === 'stream') {
        const pump = await startStreamPump({
          endpoint: dynamodb.endpoint,
          region: REGION,
          credentials: CREDENTIALS,
          tableName: LOCAL_TABLE,
          handler: handler as StreamHandler,
          filter: definition.filter,
          // Each consumer keeps its own position (as each event source mapping does), so a slow one never holds back another.
          checkpointFile: options.memory ? undefined : join(dataDir, checkpointFileOf(definition.name)),
          onError: (error) => log(`stream ${definition.name}: ${String(error)}`),
        });
        pumps.push(pump);
        stoppers.push(pump.stop);
      }
    }

    // Scheduled functions (the pending-work sweep) run once now and then on their schedule.
    for (const { definition, handler } of loaded) {
      if (definition.kind !== 'schedule') continue;
      const schedule = startSchedule(handler as ScheduledHandler, definition.everyMinutes, (error) =>
        log(`schedule ${definition.name}: ${String(error)}`),
      );
      stoppers.push(schedule.stop);
    }

    const seeded = await seedOrReuse(dataDir, options.memory);
    // The review app, built now if its sources changed since the last build (esbuild: well under a second).
    const { ensureWebBuilt } = await import('../../web/build.js');
    const web = { dir: ensureWebBuilt(), storageOrigin: new URL(s3.endpoint).origin };
    const sockets = liveSockets;
    const gateway = await startGateway(targets, {
      port: options.port,
      onHandled: wakePumps,
      web,
      ...(sockets ? { upgrade: sockets.upgrade } : {}),
    });
    stoppers.push(gateway.close);
    // Before the gateway closes (stoppers run last first): the sockets say they are going away.
    if (sockets) stoppers.push(sockets.close);
    // The review app is this gateway's (docs/review-app.md "Where markupUrl points"): markupUrl and
    // email links point here, from requests and from workers (webhook bodies), which have no request.
    process.env[ENV.appUrl] = gateway.url;
    // What POST /live/tickets hands out: this gateway's own port (DESIGN.md "Live updates").
    process.env[ENV.liveUrl] = `${gateway.url.replace(/^http/, 'ws')}${LIVE_PATH}`;
    resetConfig();
    const stack: StackInfo = { baseUrl: gateway.url, ...seeded };
    writeFileSync(servicesFile(dataDir), `${JSON.stringify(services, null, 2)}\n`);
    writeFileSync(stackFile(dataDir), `${JSON.stringify(stack, null, 2)}\n`);
    return { stack, services, dataDir, ffmpegBuild: ffmpeg.building, faults: { setQueuesReachable: sqsFront.setReachable }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Where a stream consumer's position is kept: the webhook fan-out's file keeps its older name, so a
 * DATA_DIR written before there were two consumers resumes where it stopped.
 */
const checkpointFileOf = (name: string) => (name === 'webhook-fanout' ? 'stream-checkpoint.json' : `stream-checkpoint-${name}.json`);

async function loadHandler(definition: FunctionDefinition): Promise<unknown> {
  const module = (await import(new URL(`../../${entryOf(definition)}`, import.meta.url).href)) as { handler: unknown };
  return module.handler;
}

/**
 * On a fresh DATA_DIR: an organization with one workspace and both kinds of key. On a persisted
 * DATA_DIR whose organization still exists: the same keys again (only their hashes are in the table,
 * so stack.json is where they survive a restart).
 */
async function seedOrReuse(dataDir: string, memory: boolean): Promise<Omit<StackInfo, 'baseUrl'>> {
  const file = stackFile(dataDir);
  if (!memory && existsSync(file)) {
    const previous = JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
    if (previous.organizationId && (await getOrganization(previous.organizationId))) {
      const { baseUrl: _ignored, ...rest } = previous;
      return rest;
    }
  }
  // Names a new user recognises in what they see (the workspace, the author of what a seeded key writes).
  const created = await createOrganization('Acme Design', {
    workspaceName: 'Website redesign',
    organizationKeyName: 'Local organization key',
    workspaceKeyName: 'Local workspace key',
  });
  // A person to sign in to the review app as: the link arrives in the SES emulator.
  await addVerifiedMember(created.workspaceId, LOCAL_OWNER_EMAIL, 'owner', 'Olivia Owner');
  return {
    organizationId: created.organizationId,
    workspaceId: created.workspaceId,
    organizationApiKey: created.organizationApiKey.apiKey,
    workspaceApiKey: created.workspaceApiKey.apiKey,
  };
}
