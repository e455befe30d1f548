import type { QueueName } from './queues.js';
import * as v from 'valibot';

/** The longest an exchange token may live (DESIGN.md "Trust rules": `EXCHANGE_TOKEN_TTL_SECONDS` is at most 3600). */
export const MAX_EXCHANGE_TOKEN_TTL_SECONDS = 3600;

/**
 * The environment a function or tool runs with, parsed once. Variable names appear only here and in
 * the CDK `bind*` helpers of `infra/constructs/service-function.ts`.
 */
const EnvSchema = v.object({
  TABLE_NAME: v.optional(v.pipe(v.string(), v.minLength(1))),
  BUCKET_NAME: v.optional(v.pipe(v.string(), v.minLength(1))),
  UPLOAD_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  CONVERSION_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  WEBHOOK_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  WEBHOOK_DEAD_LETTER_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  THUMBNAIL_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  CONVERSION_DEAD_LETTER_HOLD_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  MOVE_QUEUE_URL: v.optional(v.pipe(v.string(), v.url())),
  AWS_REGION: v.optional(v.string(), 'us-east-1'),
  /** Set only by the local stack: endpoints of the emulators. */
  DYNAMODB_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  S3_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  SQS_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  SES_ENDPOINT: v.optional(v.pipe(v.string(), v.url())),
  /** The From address of the service's emails (invitations): a verified SES identity. Without it no email is sent. */
  EMAIL_SENDER: v.optional(v.pipe(v.string(), v.regex(/^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'must be an email address'))),
  /** The web app; markups link to `<APP_URL>/markups/<id>`. Without it they link to the API's own origin. */
  APP_URL: v.optional(v.pipe(v.string(), v.url())),
  /** `1`: without APP_URL, the app's origin is the one the web stack wrote into the table (`shared/domain/organizations/app-url.ts`). */
  APP_URL_FROM_TABLE: v.optional(v.picklist(['1'])),
  /** Chromium for page thumbnails; without it the usual install paths are tried, then none (placeholder). */
  CHROMIUM_PATH: v.optional(v.string()),
  /** On Lambda: the layer folder holding @sparticuz/chromium's packed Chromium build. */
  CHROMIUM_PACK_DIR: v.optional(v.string()),
  /** `local` allows loopback webhook targets and path-style S3 addresses. */
  STACK_MODE: v.optional(v.picklist(['local', 'aws']), 'aws'),
  LOG_LEVEL: v.optional(v.picklist(['debug', 'info', 'warn', 'error']), 'info'),
  /** Deployed: the KMS key (ECC_NIST_P256) exchange tokens are signed with; only the auth function may sign with it. */
  EXCHANGE_KEY_ARN: v.optional(v.pipe(v.string(), v.regex(/^arn:[^:]+:kms:[^:]*:[^:]*:key\/[^/]+$/, 'must be a KMS key ARN'))),
  /** Local: the file in DATA_DIR holding the P-256 private JWK instead (the local stack makes it). */
  EXCHANGE_KEYS_FILE: v.optional(v.pipe(v.string(), v.minLength(1))),
  /**
   * Lifetime of exchange tokens in seconds (DESIGN.md: 5 minutes by default, at most an hour: a
   * token is the end user's credential until it expires).
   */
  EXCHANGE_TOKEN_TTL_SECONDS: v.optional(
    v.pipe(
      v.string(),
      v.transform(Number),
      v.integer('must be a whole number of seconds'),
      v.minValue(30, 'must be at least 30'),
      v.maxValue(MAX_EXCHANGE_TOKEN_TTL_SECONDS, `must be at most ${MAX_EXCHANGE_TOKEN_TTL_SECONDS} (one hour)`),
    ),
    '300',
  ),
  /** The identity provider of POST /auth/sdk-exchange (DESIGN.md "SDK exchange"). */
  IDP_JWKS_URL: v.optional(v.pipe(v.string(), v.url())),
  IDP_ISSUER: v.optional(v.pipe(v.string(), v.minLength(1))),
  IDP_AUDIENCE: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** `ghostscript` enables the optional EPS converter (AGPL-3.0, installed apart: `npm run converters:eps`). */
  EPS_CONVERTER: v.optional(v.string()),
  FFMPEG_PATH: v.optional(v.string()),
  /**
   * Deployed: the web stack's distribution sends this value as `X-Origin-Verify` (a Secrets Manager
   * secret of the API stack); only a request that carries it may name its viewer's address
   * (`shared/http/viewer-address.ts`). Unset: no request may.
   */
  ORIGIN_VERIFY: v.optional(v.pipe(v.string(), v.minLength(32, 'must be at least 32 characters'))),
  /**
   * The live-update socket's URL (`ws://` locally, the WebSocket API's `wss://` deployed) that `POST /live/tickets` hands out with a
   * ticket.
   */
  LIVE_URL: v.optional(v.pipe(v.string(), v.regex(/^wss?:\/\/[^\s?#]+$/, 'must be a ws:// or wss:// URL without query'))),
  /** Deployed: the WebSocket API's management endpoint (`https://…/<stage>`) the live functions post to connections through. */
  LIVE_MANAGEMENT_URL: v.optional(v.pipe(v.string(), v.url())),
});

export interface Config {
  tableName: string;
  bucketName: string | undefined;
  conversionQueueUrl: string | undefined;
  webhookQueueUrl: string | undefined;
  uploadQueueUrl: string | undefined;
  /** Where the delivery worker puts a delivery that failed its last attempt. */
  webhookDeadLetterQueueUrl: string | undefined;
  thumbnailQueueUrl: string | undefined;
  /** Where the conversion dead-letter consumer keeps what it handled, for `admin queue redrive`. */
  conversionDeadLetterHoldQueueUrl: string | undefined;
  /** The move worker's queue (cross-workspace folder moves). */
  moveQueueUrl: string | undefined;
  region: string;
  endpoints: { dynamodb?: string; s3?: string; sqs?: string; ses?: string };
  emailSender: string | undefined;
  mode: 'local' | 'aws';
  appUrl: string | undefined;
  /** Deployed without context `appUrl`: read the app's origin from the table (`shared/domain/organizations/app-url.ts`). */
  appUrlFromTable: boolean;
  chromiumPath: string | undefined;
  chromiumPackDir: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Where the exchange-token signing key is: a KMS key (deployed) or a file (local). */
  exchangeKeys: { kmsKeyArn: string } | { file: string } | undefined;
  exchangeTokenTtlSeconds: number;
  identityProvider: { jwksUrl: string; issuer: string; audience: string } | undefined;
  /** The operator enabled the optional Ghostscript EPS converter; it is used only if also installed. */
  epsConverter: boolean;
  /** The ffmpeg binary (deployed: the converters layer's); unset locally, where the repository's build is used. */
  ffmpegPath: string | undefined;
  /** The distribution's proof (`X-Origin-Verify`) that lets a request name its viewer's address; undefined: none may. */
  originVerify: string | undefined;
  /** Where live-update clients connect (DESIGN.md "Live updates"); undefined: not configured. */
  liveUrl: string | undefined;
  /** Deployed: the WebSocket API's connection-management endpoint. */
  liveManagementUrl: string | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses an environment into a Config; throws a ConfigError naming every bad variable. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = v.safeParse(EnvSchema, env);
  if (!parsed.success) {
    const problems = parsed.issues.map((issue) => `${v.getDotPath(issue) ?? '?'}: ${issue.message}`);
    throw new ConfigError(`Invalid environment: ${problems.join('; ')}`);
  }
  const e = parsed.output;
  const config = {
    get tableName(): string {
      if (!e.TABLE_NAME) throw new ConfigError('TABLE_NAME is not set: this function was not granted the table.');
      return e.TABLE_NAME;
    },
    bucketName: e.BUCKET_NAME,
    conversionQueueUrl: e.CONVERSION_QUEUE_URL,
    webhookQueueUrl: e.WEBHOOK_QUEUE_URL,
    uploadQueueUrl: e.UPLOAD_QUEUE_URL,
    webhookDeadLetterQueueUrl: e.WEBHOOK_DEAD_LETTER_QUEUE_URL,
    thumbnailQueueUrl: e.THUMBNAIL_QUEUE_URL,
    conversionDeadLetterHoldQueueUrl: e.CONVERSION_DEAD_LETTER_HOLD_QUEUE_URL,
    moveQueueUrl: e.MOVE_QUEUE_URL,
    region: e.AWS_REGION,
    endpoints: { dynamodb: e.DYNAMODB_ENDPOINT, s3: e.S3_ENDPOINT, sqs: e.SQS_ENDPOINT, ses: e.SES_ENDPOINT },
    emailSender: e.EMAIL_SENDER,
    mode: e.STACK_MODE,
    appUrl: e.APP_URL?.replace(/\/+$/, ''),
    appUrlFromTable: e.APP_URL_FROM_TABLE === '1',
    chromiumPath: e.CHROMIUM_PATH || undefined,
    chromiumPackDir: e.CHROMIUM_PACK_DIR || undefined,
    logLevel: e.LOG_LEVEL,
    exchangeKeys: e.EXCHANGE_KEY_ARN
      ? { kmsKeyArn: e.EXCHANGE_KEY_ARN }
      : e.EXCHANGE_KEYS_FILE
        ? { file: e.EXCHANGE_KEYS_FILE }
        : undefined,
    exchangeTokenTtlSeconds: Number(e.EXCHANGE_TOKEN_TTL_SECONDS),
    identityProvider:
      e.IDP_JWKS_URL && e.IDP_ISSUER && e.IDP_AUDIENCE
        ? { jwksUrl: e.IDP_JWKS_URL, issuer: e.IDP_ISSUER, audience: e.IDP_AUDIENCE }
        : undefined,
    epsConverter: e.EPS_CONVERTER === 'ghostscript',
    ffmpegPath: e.FFMPEG_PATH || undefined,
    originVerify: e.ORIGIN_VERIFY,
    liveUrl: e.LIVE_URL,
    liveManagementUrl: e.LIVE_MANAGEMENT_URL,
  };
  return config;
}

let cached: Config | undefined;

/**
 * The process configuration. Lambda entry points call it at module load so a missing variable fails
 * the cold start, not the first request; modules that are merely imported (by CDK or the OpenAPI
 * generator) never touch the environment.
 */
export function getConfig(): Config {
  cached ??= parseConfig(process.env);
  return cached;
}

/** Forgets the parsed configuration; the local stack and tests call it after changing the environment. */
export function resetConfig(): void {
  cached = undefined;
}

/** Names of the environment variables, for the CDK bind helpers and the local stack. */
export const ENV = {
  tableName: 'TABLE_NAME',
  bucketName: 'BUCKET_NAME',
  conversionQueueUrl: 'CONVERSION_QUEUE_URL',
  webhookQueueUrl: 'WEBHOOK_QUEUE_URL',
  uploadQueueUrl: 'UPLOAD_QUEUE_URL',
  webhookDeadLetterQueueUrl: 'WEBHOOK_DEAD_LETTER_QUEUE_URL',
  thumbnailQueueUrl: 'THUMBNAIL_QUEUE_URL',
  conversionDeadLetterHoldQueueUrl: 'CONVERSION_DEAD_LETTER_HOLD_QUEUE_URL',
  moveQueueUrl: 'MOVE_QUEUE_URL',
  dynamodbEndpoint: 'DYNAMODB_ENDPOINT',
  s3Endpoint: 'S3_ENDPOINT',
  sqsEndpoint: 'SQS_ENDPOINT',
  sesEndpoint: 'SES_ENDPOINT',
  emailSender: 'EMAIL_SENDER',
  stackMode: 'STACK_MODE',
  appUrl: 'APP_URL',
  appUrlFromTable: 'APP_URL_FROM_TABLE',
  chromiumPath: 'CHROMIUM_PATH',
  chromiumPackDir: 'CHROMIUM_PACK_DIR',
  logLevel: 'LOG_LEVEL',
  exchangeKeyArn: 'EXCHANGE_KEY_ARN',
  exchangeKeysFile: 'EXCHANGE_KEYS_FILE',
  exchangeTokenTtlSeconds: 'EXCHANGE_TOKEN_TTL_SECONDS',
  idpJwksUrl: 'IDP_JWKS_URL',
  idpIssuer: 'IDP_ISSUER',
  idpAudience: 'IDP_AUDIENCE',
  epsConverter: 'EPS_CONVERTER',
  ffmpegPath: 'FFMPEG_PATH',
  originVerify: 'ORIGIN_VERIFY',
  liveUrl: 'LIVE_URL',
  liveManagementUrl: 'LIVE_MANAGEMENT_URL',
} as const;

/**
 * The variable that carries each queue's URL to the functions that send to it, and to `admin queue` (the uploads queue's only reader by
 * URL: S3 sends to it).
 */
export const QUEUE_URL_ENV = {
  uploads: ENV.uploadQueueUrl,
  conversion: ENV.conversionQueueUrl,
  webhookDelivery: ENV.webhookQueueUrl,
  thumbnails: ENV.thumbnailQueueUrl,
  moves: ENV.moveQueueUrl,
} as const satisfies Record<QueueName, string>;

/** The variable that carries a dead-letter queue's URL to a function that sends to it (only deliveries do). */
export const DEAD_LETTER_URL_ENV: Partial<Record<QueueName, string>> = {
  webhookDelivery: ENV.webhookDeadLetterQueueUrl,
};

/** The variable that carries a hold queue's URL to its dead-letter queue's consumer (QueueDefinition.deadLetterHold). */
export const DEAD_LETTER_HOLD_URL_ENV: Partial<Record<QueueName, string>> = {
  conversion: ENV.conversionDeadLetterHoldQueueUrl,
};
