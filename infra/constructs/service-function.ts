import { fileURLToPath } from 'node:url';
import { Annotations, Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, LayerVersion, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type ICommandHooks, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { BUNDLING } from './bundling.js';
import { convertersLayer, FFMPEG_LAYER_PATH } from './converters-layer.js';
import { tracingLayer } from './tracing-layer.js';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { entryOf, type FunctionAccess, type FunctionDefinition } from '../../functions/registry.js';
import type { ShippedFile } from '../../shared/http/shipped-file.js';
import { DEAD_LETTER_HOLD_URL_ENV, DEAD_LETTER_URL_ENV, ENV, QUEUE_URL_ENV } from '../../shared/config.js';
import { METRICS_NAMESPACE } from '../../shared/metrics.js';
import { QUEUES, type QueueName } from '../../shared/queues.js';
import { TABLE } from '../../shared/db/core/table.js';

/** The repository root: NodejsFunction's project root, and what every entry path is relative to. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where Lambda mounts the Chromium layer's files (the packed build of @sparticuz/chromium). */
const CHROMIUM_LAYER_DIR = '/opt/bin';

/**
 * The layer with @sparticuz/chromium's packed Chromium (x86-64, built for Lambda), taken from the
 * installed package so synth stays offline; one per stack, shared by the functions that render.
 */
function chromiumLayer(scope: Construct): LayerVersion {
  const stack = Stack.of(scope);
  const existing = stack.node.tryFindChild('ChromiumLayer');
  if (existing) return existing as LayerVersion;
  return new LayerVersion(stack, 'ChromiumLayer', {
    code: Code.fromAsset(`${REPO_ROOT}node_modules/@sparticuz/chromium`, { exclude: ['*', '!bin', '!bin/**'] }),
    compatibleArchitectures: [Architecture.X86_64],
    description: 'Chromium for headless page rendering (@sparticuz/chromium bin/, mounted at /opt/bin)',
  });
}

/**
 * Copies a function's `files` next to its bundle after esbuild ran (local bundling: the commands run
 * on the machine that synthesizes), where `readShippedFile` finds them at run time.
 */
export function shippedFilesHooks(files: readonly ShippedFile[]): ICommandHooks {
  const quote = (path: string) => `'${path.replace(/'/g, "'\\''")}'`;
  return {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir, outputDir) =>
      files.map((file) => `cp ${quote(`${inputDir}/${file.source}`)} ${quote(`${outputDir}/${file.name}`)}`),
  };
}

/** Seconds a function may run when the registry does not say. */
const DEFAULT_TIMEOUT_SECONDS = { api: 10, s3: 30, stream: 30, schedule: 60, websocket: 29 } as const;

/** The shared resources a function's declared `access` can point at. */
export interface ServiceResources {
  readonly table: ITable;
  readonly bucket: IBucket;
  readonly queues: Readonly<Record<QueueName, IQueue>>;
  readonly deadLetterQueues: Readonly<Record<QueueName, IQueue>>;
  /** The hold queues of the queues that have one (QueueDefinition.deadLetterHold). */
  readonly deadLetterHolds: Readonly<Partial<Record<QueueName, IQueue>>>;
  /** The exchange-token key (KMS, P-256); only the API stack has it (workers never see a credential). */
  readonly exchangeKey?: IKey;
  /** The live-update WebSocket API (the workers stack's): what `liveConnections` functions manage. */
  readonly liveSocket?: LiveSocketResources;
  /** The live-update socket's `wss://` URL, for the function that hands out tickets (`liveUrl`). */
  readonly liveUrl?: string;
}

/** The WebSocket API of live updates as its functions see it. */
export interface LiveSocketResources {
  /** `arn:…:execute-api:<region>:<account>:<apiId>/<stage>/POST/@connections/*`: ManageConnections on this API's stage only. */
  readonly manageConnectionsArn: string;
  /** The stage's connection-management endpoint (`https://<apiId>.execute-api.<region>.amazonaws.com/<stage>`). */
  readonly managementUrl: string;
}

export interface ServiceFunctionProps {
  /** The registry entry: entry file, memory, timeout. */
  readonly definition: FunctionDefinition;
  /** @default 'info' */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** The CloudWatch namespace of the service's metrics (POWERTOOLS_METRICS_NAMESPACE). @default METRICS_NAMESPACE */
  readonly metricsNamespace?: string;
  /** The web app markups link to; without it, markups link to the API's own origin. */
  readonly appUrl?: string;
  /** The From address of the service's emails, a verified SES identity; only functions that declare `sendsEmail` get it. */
  readonly emailSender?: string;
  /** X-Ray active tracing. @default false */
  readonly tracing?: boolean;
  /** @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /**
   * The optional EPS converter (Ghostscript, AGPL-3.0; context `epsConverter`): a function with
   * `converters` gets it in its layer and `EPS_CONVERTER=ghostscript`. @default false
   */
  readonly epsConverter?: boolean;
}

/**
 * How cdk-nag names a resource inside a finding id (`AwsSolutions-IAM5[Resource::<label>]`):
 * the CloudFormation value with `Fn::Join` flattened, `Ref`/`Fn::GetAtt` as `<Name>` / `<Name.Attr>`
 * and `Fn::ImportValue` as the export name. Works for values local to the stack or imported by
 * export name, which is how the stateless stacks see the data stack.
 */
export function nagLabel(scope: Construct, value: string): string {
  const visit = (node: unknown): string => {
    if (node === undefined || node === null) return '';
    if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
    const cfn = node as Record<string, unknown>;
    if (Array.isArray(cfn['Fn::Join'])) {
      const [delimiter, items] = cfn['Fn::Join'] as [string, unknown[]];
      return items.map(visit).join(delimiter);
    }
    if (cfn['Fn::Sub'] !== undefined) return visit(cfn['Fn::Sub']);
    if (Array.isArray(cfn['Fn::GetAtt'])) {
      const [resource, attribute] = cfn['Fn::GetAtt'] as [unknown, unknown];
      return `<${visit(resource)}.${visit(attribute)}>`;
    }
    if (cfn['Fn::ImportValue'] !== undefined) return visit(cfn['Fn::ImportValue']);
    if (cfn.Ref !== undefined) return `<${visit(cfn.Ref)}>`;
    return JSON.stringify(node);
  };
  return visit(Stack.of(scope).resolve(value));
}

/** `webhook-delivery` -> `WebhookDelivery`: the construct id stem of a registry name. */
export function pascalCase(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** Construct id of a function: `WorkspacesFunction`, `UploadConfirmedFunction`, ... */
export const functionIdOf = (definition: Pick<FunctionDefinition, 'name'>) => `${pascalCase(definition.name)}Function`;

function timeoutSecondsOf(definition: FunctionDefinition): number {
  if (definition.timeoutSeconds !== undefined) return definition.timeoutSeconds;
  // A worker's timeout is fixed by its queue: the visibility timeout was sized from it.
  if (definition.kind === 'sqs') return QUEUES[definition.queue].workerTimeoutSeconds;
  return DEFAULT_TIMEOUT_SECONDS[definition.kind];
}

/**
 * One Lambda of the service with the house defaults: the Node.js 22 runtime running a node22-syntax
 * ESM bundle built locally by esbuild with the pinned AWS SDK inside, arm64 unless the registry asks
 * for x86-64, source maps, and its own log group with a retention.
 *
 * The execution role is created here rather than by NodejsFunction so that it carries no managed
 * policy: it may write to this function's log group and, through the `bind*` helpers, touch exactly
 * what the registry declares.
 */
export class ServiceFunction extends NodejsFunction {
  readonly definition: FunctionDefinition;
  /** The execution role; its default policy holds every grant the bind helpers make. */
  readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { definition } = props;
    // Siblings rather than children: a NodejsFunction needs its role and log group before `super`.
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of the ${definition.name} function`,
    });
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      entry: `${REPO_ROOT}${entryOf(definition)}`,
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: `${REPO_ROOT}package-lock.json`,
      runtime: Runtime.NODEJS_22_X,
      architecture: definition.architecture === 'x86_64' ? Architecture.X86_64 : Architecture.ARM_64,
      memorySize: definition.memoryMb ?? 512,
      timeout: Duration.seconds(timeoutSecondsOf(definition)),
      role,
      logGroup,
      tracing: props.tracing ? Tracing.ACTIVE : Tracing.DISABLED,
      description: `Review Board Service: ${definition.name}`,
      layers: [
        ...(definition.chromium ? [chromiumLayer(scope)] : []),
        ...(definition.converters ? [convertersLayer(scope, REPO_ROOT, { epsConverter: props.epsConverter })] : []),
        ...(props.tracing ? [tracingLayer(scope, REPO_ROOT)] : []),
      ],
      ephemeralStorageSize: definition.ephemeralStorageMb ? Size.mebibytes(definition.ephemeralStorageMb) : undefined,
      environment: {
        ...(definition.chromium ? { [ENV.chromiumPackDir]: CHROMIUM_LAYER_DIR } : {}),
        NODE_OPTIONS: '--enable-source-maps',
        [ENV.stackMode]: 'aws',
        [ENV.logLevel]: props.logLevel ?? 'info',
        // Powertools: the `service` of every log line and metric, and the metrics' namespace.
        POWERTOOLS_SERVICE_NAME: definition.name,
        POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace ?? METRICS_NAMESPACE,
        // Tracing (context `tracing`): shared/tracing.ts loads the Tracer from the tracing layer; no response bodies in traces.
        ...(props.tracing ? { POWERTOOLS_TRACE_ENABLED: 'true', POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false' } : {}),
        // Without context appUrl the app is the web stack's distribution, whose origin it writes into the table.
        ...(props.appUrl ? { [ENV.appUrl]: props.appUrl } : { [ENV.appUrlFromTable]: '1' }),
        ...(definition.converters ? { [ENV.ffmpegPath]: FFMPEG_LAYER_PATH } : {}),
        ...(definition.converters && props.epsConverter ? { [ENV.epsConverter]: 'ghostscript' } : {}),
      },
      bundling: {
        format: OutputFormat.ESM,
        target: BUNDLING.target,
        minify: BUNDLING.minify,
        sourceMap: BUNDLING.sourceMap,
        mainFields: [...BUNDLING.mainFields],
        banner: BUNDLING.banner,
        // Bundle the AWS SDK v3 we pin and test with instead of the runtime's copy.
        externalModules: [],
        forceDockerBundling: false,
        ...(definition.files?.length ? { commandHooks: shippedFilesHooks(definition.files) } : {}),
      },
    });

    this.definition = definition;
    this.executionRole = role;

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Pinned to nodejs22.x: nodejs20.x is deprecated on Lambda (2026-04-30) and the code targets node22 syntax, the Node the project runs and tests on (.nvmrc); Node 24 is a deliberate, tested upgrade once the local toolchain moves to it.',
    });
    if (props.tracing) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions.',
      });
    }
  }

  /**
   * Sets TABLE_NAME and grants read (`read`) or read and write (`readWrite`) on the table and its
   * indexes; `partiqlUpdates` adds `dynamodb:PartiQLUpdate` (carrying a moved tree updates records 25
   * to a BatchExecuteStatement, which grantReadWriteData does not cover) for the functions that do it.
   */
  bindTable(table: ITable, mode: NonNullable<FunctionAccess['table']>, partiqlUpdates = false): this {
    this.addEnvironment(ENV.tableName, table.tableName);
    if (mode === 'read') table.grantReadData(this);
    else table.grantReadWriteData(this);
    if (partiqlUpdates) table.grant(this, 'dynamodb:PartiQLUpdate');
    this.acknowledgeWildcards(
      [`Resource::${nagLabel(this, table.tableArn)}/index/*`],
      `The GSIs of the single table (${TABLE.indexes.map((index) => index.name).join(', ')}: every index it has); the table grant names them as <table>/index/*.`,
    );
    return this;
  }

  /** Sets BUCKET_NAME and grants read (`read`) or read and write (`readWrite`) on the bucket's objects. */
  bindBucket(bucket: IBucket, mode: NonNullable<FunctionAccess['bucket']>): this {
    this.addEnvironment(ENV.bucketName, bucket.bucketName);
    if (mode === 'read') bucket.grantRead(this);
    else bucket.grantReadWrite(this);
    this.acknowledgeWildcards(
      [`Resource::${nagLabel(this, bucket.bucketArn)}/*`],
      'Object keys (uploads/<workspaceId>/<fileId>/<filename>, conversion outputs) are created at run time, so object actions need <bucket>/*; the grant is limited to this one bucket.',
    );
    this.acknowledgeWildcards(
      ['Action::s3:GetObject*', 'Action::s3:GetBucket*', 'Action::s3:List*'],
      'The read action groups of the bucket grant: GetObject/HeadObject on objects, and ListBucket so a missing key answers 404 rather than 403; all scoped to the one bucket.',
    );
    if (mode === 'readWrite') {
      this.acknowledgeWildcards(
        ['Action::s3:DeleteObject*', 'Action::s3:Abort*'],
        'The write action groups of the bucket grant: delete objects and abort multipart uploads of this bucket, which the function declares readWrite access to.',
      );
    }
    return this;
  }

  /** Sets the queue's URL variable and grants sending to it (and nothing else on it). */
  bindQueue(queue: IQueue, name: QueueName): this {
    this.addEnvironment(QUEUE_URL_ENV[name], queue.queueUrl);
    queue.grantSendMessages(this);
    return this;
  }

  /** Sets the dead-letter queue's URL variable and grants sending to it (and nothing else on it). */
  bindDeadLetterQueue(queue: IQueue, name: QueueName): this {
    const variable = DEAD_LETTER_URL_ENV[name];
    if (!variable) throw new Error(`No environment variable carries the ${name} dead-letter queue's URL (DEAD_LETTER_URL_ENV).`);
    this.addEnvironment(variable, queue.queueUrl);
    queue.grantSendMessages(this);
    return this;
  }

  /** Sets the hold queue's URL variable and grants sending to it (and nothing else on it). */
  bindDeadLetterHold(queue: IQueue | undefined, name: QueueName): this {
    const variable = DEAD_LETTER_HOLD_URL_ENV[name];
    if (!queue || !variable)
      throw new Error(`The ${name} queue has no hold queue (QueueDefinition.deadLetterHold, DEAD_LETTER_HOLD_URL_ENV).`);
    this.addEnvironment(variable, queue.queueUrl);
    queue.grantSendMessages(this);
    return this;
  }

  /**
   * Sets EXCHANGE_KEY_ARN and grants, on that one key, `kms:Sign` to the function that mints exchange
   * tokens and `kms:GetPublicKey` to those that verify them: a verifier can never mint a token.
   */
  bindExchangeKey(key: IKey, uses: ExchangeKeyUses): this {
    this.addEnvironment(ENV.exchangeKeyArn, key.keyArn);
    const actions = [...(uses.signs ? ['kms:Sign'] : []), ...(uses.verifies ? ['kms:GetPublicKey'] : [])];
    if (actions.length > 0) key.grant(this, ...actions);
    return this;
  }

  /**
   * Sets EMAIL_SENDER and grants `ses:SendEmail` on that sender's identities only (the address, or
   * the domain it was verified through), with the From address pinned by condition. Without a
   * sender the function gets neither, and its emails are not sent (a synth warning says so).
   */
  bindEmailSender(sender: string | undefined): this {
    if (!sender) {
      Annotations.of(this).addWarning(
        `No emailSender in the CDK context: ${this.definition.name} sends no email (invitations are recorded, their emails not sent; no sign-in links go out).`,
      );
      return this;
    }
    this.addEnvironment(ENV.emailSender, sender);
    const stack = Stack.of(this);
    const identity = (name: string) => `arn:${stack.partition}:ses:${stack.region}:${stack.account}:identity/${name}`;
    this.executionRole.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [identity(sender), identity(sender.slice(sender.indexOf('@') + 1))],
        conditions: { StringEquals: { 'ses:FromAddress': sender } },
      }),
    );
    return this;
  }

  /**
   * The function of one registry entry, with its construct id and exactly the access the entry
   * declares; how every stack makes its functions.
   */
  static forDefinition(
    scope: Construct,
    definition: FunctionDefinition,
    resources: ServiceResources,
    settings: Omit<ServiceFunctionProps, 'definition'>,
  ): ServiceFunction {
    const fn = new ServiceFunction(scope, functionIdOf(definition), { ...settings, definition }).bindAccess(resources);
    return definition.access.sendsEmail ? fn.bindEmailSender(settings.emailSender) : fn;
  }

  /** Applies the registry's `access` declaration: the function gets exactly what it declares. */
  bindAccess(resources: ServiceResources): this {
    const { access } = this.definition;
    if (access.table) this.bindTable(resources.table, access.table, access.partiqlUpdates === true);
    if (access.bucket) this.bindBucket(resources.bucket, access.bucket);
    for (const name of access.sendsTo ?? []) this.bindQueue(resources.queues[name], name);
    for (const name of access.sendsToDeadLetters ?? []) this.bindDeadLetterQueue(resources.deadLetterQueues[name], name);
    for (const name of access.sendsToDeadLetterHold ?? []) this.bindDeadLetterHold(resources.deadLetterHolds[name], name);
    if (access.liveConnections) {
      if (!resources.liveSocket)
        throw new Error(`${this.definition.name} manages live-update connections but its stack has no WebSocket API.`);
      this.bindLiveConnections(resources.liveSocket);
    }
    if (access.liveUrl) {
      if (!resources.liveUrl) throw new Error(`${this.definition.name} hands out the live-update URL but its stack was given none.`);
      this.addEnvironment(ENV.liveUrl, resources.liveUrl);
    }
    const uses = exchangeKeyUses(this.definition);
    if (uses.signs || uses.verifies) {
      if (!resources.exchangeKey)
        throw new Error(`${this.definition.name} verifies or mints exchange tokens but its stack has no exchange-token key.`);
      this.bindExchangeKey(resources.exchangeKey, uses);
    }
    return this;
  }

  /**
   * Sets LIVE_MANAGEMENT_URL and grants `execute-api:ManageConnections` (post to, read and close
   * connections) on the live-update WebSocket API's stage only, nothing else of API Gateway.
   */
  bindLiveConnections(live: LiveSocketResources): this {
    this.addEnvironment(ENV.liveManagementUrl, live.managementUrl);
    this.executionRole.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['execute-api:ManageConnections'], resources: [live.manageConnectionsArn] }),
    );
    this.acknowledgeWildcards(
      [`Resource::${nagLabel(this, live.manageConnectionsArn)}`],
      'Connection ids are made by API Gateway at run time, so ManageConnections names @connections/* of the one live-update API stage.',
    );
    return this;
  }

  /** Acknowledges specific cdk-nag IAM5 findings on this function's role policy, one id per wildcard. */
  private acknowledgeWildcards(findings: string[], reason: string): void {
    for (const finding of findings) {
      Validations.of(this.executionRole).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
    }
  }
}

/** What a function does with the exchange-token key. */
export interface ExchangeKeyUses {
  /** It mints tokens: it declares `access.exchangeKeys` (the auth group). */
  signs: boolean;
  /** It verifies tokens: it has a credentialed route. */
  verifies: boolean;
}

/** Whether a function mints exchange tokens (it declares so) and whether it verifies them (it has a credentialed route). */
export function exchangeKeyUses(definition: FunctionDefinition): ExchangeKeyUses {
  return {
    signs: definition.access.exchangeKeys === true,
    verifies: definition.kind === 'api' && definition.routes.some((route) => route.auth === 'apiKey'),
  };
}
