import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Annotations, App, Tags, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ApiStack } from './stacks/api-stack.js';
import { DataStack } from './stacks/data-stack.js';
import { WebStack } from './stacks/web-stack.js';
import { WorkersStack } from './stacks/workers-stack.js';
import { METRICS_NAMESPACE } from '../shared/metrics.js';
import { WORD_SLOTS } from '../shared/db/markup-words.js';

type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** Settings read from CDK context (`cdk.json` or `-c key=value`). */
export interface ReviewBoardSettings {
  /** Suffix of every stack name, so several stages can live in one account. `-c stage=prod` */
  stage: string;
  /**
   * Origins browsers may post upload forms from (the upload bucket's CORS). `-c corsOrigins=https://a.example,https://b.example`.
   * The API's own CORS follows the installations' allowedOrigins instead (`shared/http/cors.ts`).
   */
  corsOrigins: string[];
  /**
   * How many of the markup word index's GSIs (GSI6 onwards, at most `WORD_SLOTS`) the table has.
   * CloudFormation adds one GSI per stack update: an existing table is upgraded by deploying with
   * `-c wordIndexes=1`, then 2, … up to 10 (the default, which a new table gets at once).
   */
  wordIndexes: number;
  logLevel: LogLevel;
  tracing: boolean;
  /**
   * The web app markups and emails link to (`<appUrl>/markups/<id>`). Default: the web stack's
   * CloudFront distribution. `-c appUrl=https://review.example.com` (a custom domain in front of it)
   */
  appUrl?: string;
  /** The From address of invitation emails, a verified SES identity (address or domain). `-c emailSender=invitations@review.example.com` */
  emailSender?: string;
  /**
   * The identity provider of POST /auth/sdk-exchange (DESIGN.md "SDK exchange"); without it the SDK
   * exchange answers 503. `-c idpJwksUrl=https://idp.example.com/.well-known/jwks.json -c idpIssuer=… -c idpAudience=…`
   */
  identityProvider?: { jwksUrl: string; issuer: string; audience: string };
  /**
   * Converts EPS files with the optional Ghostscript converter (AGPL-3.0, a separate process in the
   * conversion worker). Install it first with `npm run converters:eps`. `-c epsConverter=true`;
   * without it EPS markups end `failed` with a reason that says so.
   */
  epsConverter: boolean;
  /**
   * Where the alarm topic emails, subscribed on deploy (SNS sends a confirmation email first).
   * `-c alarmEmail=oncall@review.example.com`; without it the topic has no subscriber.
   */
  alarmEmail?: string;
  /**
   * The CloudWatch namespace of the service's own metrics (the conversion worker's
   * ConversionSucceeded/ConversionFailed), which the conversion failure-rate alarm reads.
   * `-c metricsNamespace=ReviewBoardService` (the default).
   */
  metricsNamespace: string;
}

export interface ReviewBoardApp {
  app: App;
  settings: ReviewBoardSettings;
  data: DataStack;
  workers: WorkersStack;
  api: ApiStack;
  web: WebStack;
}

/** A context list may come from cdk.json (an array) or the command line (a comma-separated string). */
const isEmailAddress = (value: string) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(value);

function listContext(value: unknown, fallback: string[]): string[] {
  if (value === undefined) return fallback;
  const items = Array.isArray(value) ? value.map(String) : String(value).split(',');
  const list = items.map((item) => item.trim()).filter(Boolean);
  return list.length > 0 ? list : fallback;
}

export function readSettings(app: App): ReviewBoardSettings {
  const context = (key: string): unknown => app.node.tryGetContext(key);
  const stage = String(context('stage') ?? 'dev');
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(stage)) throw new Error(`Context "stage" must be alphanumeric (and -): got "${stage}".`);
  const logLevel = String(context('logLevel') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`Context "logLevel" must be one of ${LOG_LEVELS.join(', ')}.`);
  const tracing = context('tracing');
  const appUrl = context('appUrl') === undefined ? undefined : String(context('appUrl'));
  if (appUrl !== undefined && !/^https?:\/\/[^\s]+$/.test(appUrl))
    throw new Error(`Context "appUrl" must be an http(s) URL: got "${appUrl}".`);
  const emailSender = context('emailSender') === undefined ? undefined : String(context('emailSender'));
  if (emailSender !== undefined && !isEmailAddress(emailSender))
    throw new Error(`Context "emailSender" must be an email address: got "${emailSender}".`);
  const idp = ['idpJwksUrl', 'idpIssuer', 'idpAudience'].map((key) => (context(key) === undefined ? undefined : String(context(key))));
  if (idp.some((value) => value !== undefined) && idp.some((value) => !value)) {
    throw new Error('Context idpJwksUrl, idpIssuer and idpAudience go together: set all three or none.');
  }
  if (idp[0] !== undefined && !/^https:\/\/[^\s]+$/.test(idp[0]))
    throw new Error(`Context "idpJwksUrl" must be an https URL: got "${idp[0]}".`);
  const wordIndexes = Number(context('wordIndexes') ?? WORD_SLOTS);
  if (!Number.isInteger(wordIndexes) || wordIndexes < 0 || wordIndexes > WORD_SLOTS) {
    throw new Error(`Context "wordIndexes" must be a whole number from 0 to ${WORD_SLOTS}: got "${String(context('wordIndexes'))}".`);
  }
  const epsConverter = context('epsConverter');
  const alarmEmail = context('alarmEmail') === undefined ? undefined : String(context('alarmEmail'));
  if (alarmEmail !== undefined && !isEmailAddress(alarmEmail))
    throw new Error(`Context "alarmEmail" must be an email address: got "${alarmEmail}".`);
  // CloudWatch's rule for a namespace: these characters, at most 255, and never AWS/ (AWS's own).
  const metricsNamespace = String(context('metricsNamespace') ?? METRICS_NAMESPACE);
  if (!/^[A-Za-z0-9._\-/#:]{1,255}$/.test(metricsNamespace) || metricsNamespace.startsWith('AWS/')) {
    throw new Error(
      `Context "metricsNamespace" must be a CloudWatch namespace (letters, digits, . - _ / # :, not starting AWS/): got "${metricsNamespace}".`,
    );
  }
  return {
    appUrl,
    emailSender,
    ...(idp[0] ? { identityProvider: { jwksUrl: idp[0], issuer: idp[1]!, audience: idp[2]! } } : {}),
    stage,
    corsOrigins: listContext(context('corsOrigins'), ['*']),
    wordIndexes,
    logLevel,
    tracing: tracing === true || tracing === 'true',
    epsConverter: epsConverter === true || epsConverter === 'true',
    ...(alarmEmail ? { alarmEmail } : {}),
    metricsNamespace,
  };
}

/**
 * The three stacks, env-agnostic: `ReviewBoardData` (stateful), `ReviewBoardWorkers` and
 * `ReviewBoardApi` (stateless; the workers stack depends on the data stack, the API stack on both:
 * its alarms notify the workers stack's alarm topic and its dashboard shows the workers), checked
 * by cdk-nag's AWS Solutions pack on synth.
 */
export function buildApp(props: AppProps = {}): ReviewBoardApp {
  const app = new App(props);
  const settings = readSettings(app);
  const stackName = (id: string) => `${id}-${settings.stage}`;
  const common = {
    logLevel: settings.logLevel,
    tracing: settings.tracing,
    appUrl: settings.appUrl,
    metricsNamespace: settings.metricsNamespace,
  };

  const data = new DataStack(app, 'ReviewBoardData', {
    stackName: stackName('ReviewBoardData'),
    description: 'Review Board Service: table, upload bucket, work queues (stateful)',
    corsOrigins: settings.corsOrigins,
    wordIndexes: settings.wordIndexes,
  });
  const workers = new WorkersStack(app, 'ReviewBoardWorkers', {
    stackName: stackName('ReviewBoardWorkers'),
    description: 'Review Board Service: upload confirmation, conversion and webhook delivery workers; the alarm topic and their alarms',
    data,
    ...common,
    epsConverter: settings.epsConverter,
    alarmEmail: settings.alarmEmail,
  });
  if (app.node.tryGetContext('apiUrl') !== undefined) {
    // Read until webhook bodies linked only through the app's origin: say so rather than ignore it silently.
    Annotations.of(workers).addWarning(
      'Context apiUrl is no longer read: webhook bodies link through appUrl (markupUrl, thumbnailUrl), as API answers do. Remove -c apiUrl.',
    );
  }
  const api = new ApiStack(app, 'ReviewBoardApi', {
    stackName: stackName('ReviewBoardApi'),
    description: 'Review Board Service: HTTP API and its route-group functions, their alarms and the dashboard',
    data,
    workers,
    dashboardName: stackName('ReviewBoard'),
    emailSender: settings.emailSender,
    identityProvider: settings.identityProvider,
    ...common,
  });

  const web = new WebStack(app, 'ReviewBoardWeb', {
    stackName: stackName('ReviewBoardWeb'),
    description: 'Review Board Service: the CloudFront distribution (review app from a private bucket, /api/* to the HTTP API)',
    api,
    data,
    workers,
    appUrl: settings.appUrl,
  });

  for (const stack of [data, workers, api, web]) {
    Tags.of(stack).add('service', 'review-board');
    Tags.of(stack).add('stage', settings.stage);
  }
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

  return { app, settings, data, workers, api, web };
}

const invokedPath = process.argv[1];
const isEntryPoint = invokedPath !== undefined && import.meta.url === pathToFileURL(realpathSync(invokedPath)).href;
if (isEntryPoint) {
  buildApp().app.synth();
}
