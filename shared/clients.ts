import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SESv2Client } from '@aws-sdk/client-sesv2';
import { getConfig } from './config.js';
import { traced } from './tracing.js';

/** The AWS clients the service's modules send through. */
export interface Clients {
  db: DynamoDBDocumentClient;
  s3: S3Client;
  sqs: SQSClient;
  kms: KMSClient;
  ses: SESv2Client;
}

/**
 * THE seam between the service's modules and AWS. Every module sends through `getDb()`, `getS3()`,
 * …: by default the process's own clients, made once from the config on first use (a Lambda's
 * cold start, the local stack after `resetClients`). `useClients` hands others in instead, for as
 * long as the caller holds them: unit tests pass fakes (an object whose `send` answers what the test
 * needs, `test/support/fake-db.ts`), so the domain's shells run without emulators. Nothing deployed
 * calls it. It answers the function that puts the previous clients back (call it in `afterEach`:
 * unit test files share their worker's modules).
 */
export function useClients(clients: Partial<Clients>): () => void {
  const previous = given;
  given = { ...previous, ...clients };
  return () => {
    given = previous;
  };
}

/**
 * `client` without the SDK's logger middleware. The service gives the SDK no logger, yet that
 * middleware copies every command's input and output through the SDK's sensitive-data filter for
 * the no-op logger, which discards them: about 1 ms of CPU on a page of 50 threads.
 */
function quiet<T extends { middlewareStack: { remove(name: string): boolean } }>(client: T): T {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

let given: Partial<Clients> = {};
let ddb: DynamoDBDocumentClient | undefined;
let s3: S3Client | undefined;
let sqs: SQSClient | undefined;
let kms: KMSClient | undefined;
let ses: SESv2Client | undefined;

/** The document client every db module uses; created once per process. */
export function getDb(): DynamoDBDocumentClient {
  if (given.db) return given.db;
  if (!ddb) {
    const config = getConfig();
    const client = traced(quiet(new DynamoDBClient({ region: config.region, endpoint: config.endpoints.dynamodb, maxAttempts: 3 })));
    ddb = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    });
  }
  return ddb;
}

export function getS3(): S3Client {
  if (given.s3) return given.s3;
  if (!s3) {
    const config = getConfig();
    s3 = traced(
      quiet(
        new S3Client({
          region: config.region,
          endpoint: config.endpoints.s3,
          forcePathStyle: config.endpoints.s3 !== undefined,
        }),
      ),
    );
  }
  return s3;
}

export function getSqs(): SQSClient {
  if (given.sqs) return given.sqs;
  if (!sqs) {
    const config = getConfig();
    sqs = traced(quiet(new SQSClient({ region: config.region, endpoint: config.endpoints.sqs })));
  }
  return sqs;
}

/** KMS, for the exchange-token key of a deployed stack: Sign (auth function) or GetPublicKey once per cold start. */
export function getKms(): KMSClient {
  if (given.kms) return given.kms;
  kms ??= traced(quiet(new KMSClient({ region: getConfig().region })));
  return kms;
}

export function getSes(): SESv2Client {
  if (given.ses) return given.ses;
  if (!ses) {
    const config = getConfig();
    ses = traced(quiet(new SESv2Client({ region: config.region, endpoint: config.endpoints.ses })));
  }
  return ses;
}

/** Drops the cached clients (not those `useClients` handed in); the local stack and tests call it after pointing the config elsewhere. */
export function resetClients(): void {
  ddb?.destroy();
  s3?.destroy();
  sqs?.destroy();
  kms?.destroy();
  ses?.destroy();
  ddb = undefined;
  ses = undefined;
  s3 = undefined;
  sqs = undefined;
  kms = undefined;
}
