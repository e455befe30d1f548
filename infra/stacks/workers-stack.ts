import { CfnOutput, Duration, Fn, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { WebSocketApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { FilterCriteria, Function as LambdaFunction, StartingPosition, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction as LambdaFunctionTarget } from 'aws-cdk-lib/aws-events-targets';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  FUNCTIONS,
  type FunctionDefinition,
  type ScheduledFunction,
  type StreamConsumerFunction,
  type WebSocketFunction,
} from '../../functions/registry.js';
import { maxConcurrencyOf, QUEUES, type QueueName } from '../../shared/queues.js';
import { AlarmTopic, ServiceAlarms } from '../constructs/monitoring.js';
import { pascalCase, ServiceFunction, type ServiceResources } from '../constructs/service-function.js';
import type { DataStack } from './data-stack.js';

/** Records per stream batch: one fan-out call reads each workspace's registrations once for all of them. */
export const STREAM_BATCH_SIZE = 100;
/**
 * Retries of a failing stream batch: without limit (-1), and no maximum record age either, so an
 * outage of SQS or DynamoDB of any length up to the stream's 24-hour retention loses no event: the
 * fan-out resumes where it failed once the outage ends. A bounded count (10 retries are spent in
 * minutes) would skip the outage's events.
 */
export const STREAM_RETRY_ATTEMPTS = -1;

/** The live-update WebSocket API's one stage. */
export const LIVE_STAGE = 'live';

/**
 * Names of the workers stack's CloudFormation exports, read by the API stack: the alarm topic its
 * alarms notify and the worker functions its dashboard shows. Named exports, as the data stack's.
 */
export function workersExportNames(workersStackName: string) {
  return {
    alarmTopicArn: `${workersStackName}:AlarmTopicArn`,
    /** The live-update socket's `wss://` URL, which `POST /live/tickets` (an API-stack function) hands out. */
    liveUrl: `${workersStackName}:LiveUrl`,
    functionName: (name: string) => `${workersStackName}:${pascalCase(name)}FunctionName`,
  };
}

/** What the API stack takes from the workers stack: the alarm topic and the worker functions. */
export interface WorkersMonitoring {
  readonly alarmTopic: ITopic;
  /** Keyed by registry name. */
  readonly functions: Readonly<Record<string, IFunction>>;
}

export interface WorkersStackProps extends StackProps {
  /** Where the table, bucket and queues live; they are imported by export name. */
  readonly data: DataStack;
  /** @default the registry's `s3` and `sqs` functions */
  readonly functions?: readonly FunctionDefinition[];
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  readonly appUrl?: string;
  readonly tracing?: boolean;
  /** Ship and enable the optional EPS converter (Ghostscript, AGPL-3.0) in the conversion worker (context `epsConverter`). */
  readonly epsConverter?: boolean;
  /** Subscribed to the alarm topic by email (context `alarmEmail`). */
  readonly alarmEmail?: string;
  /** Namespace of the service's own metrics, for the conversion failure-rate alarm (context `metricsNamespace`). */
  readonly metricsNamespace: string;
}

/**
 * The event-driven functions: one worker per work queue (upload confirmation too: S3 sends the
 * upload prefix's ObjectCreated notifications to the uploads queue), fed by an SQS event source that reports partial batch failures so one
 * bad record is retried (and dead-lettered) alone; a `deadLetters` worker is fed by the queue's
 * dead-letter queue instead; a `stream` consumer is fed by the table's DynamoDB Stream; a `schedule`
 * function is invoked by an EventBridge rule.
 *
 * It also owns the service's one alarm topic (the API stack's alarms notify it too, through an
 * export, so the API stack deploys after this one) and the alarms of the workers, the queues, the
 * table and conversions (infra/constructs/monitoring.ts).
 */
export class WorkersStack extends Stack {
  readonly functions: Readonly<Record<string, ServiceFunction>>;
  /** The live-update WebSocket API (DESIGN.md "Live updates") and its one stage. */
  readonly liveApi: WebSocketApi;
  readonly liveStage: WebSocketStage;
  readonly alarmTopic: Topic;
  readonly alarms: ServiceAlarms;
  /** The on-failure queue of each stream consumer, keyed by registry name. */
  private readonly streamFailures: Record<string, Queue> = {};
  /** The dead-letter queue of each scheduled function's rule target, keyed by registry name. */
  private readonly scheduleFailures: Record<string, Queue> = {};

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const definitions = props.functions ?? FUNCTIONS.filter((definition) => definition.kind !== 'api');
    const live = this.createLiveApi();
    this.liveApi = live.api;
    this.liveStage = live.stage;
    const resources: ServiceResources = {
      ...props.data.importResources(this),
      liveSocket: {
        manageConnectionsArn: this.liveApi.arnForExecuteApiV2('POST/@connections/*', LIVE_STAGE),
        managementUrl: this.liveStage.callbackUrl,
      },
    };
    const functions: Record<string, ServiceFunction> = {};

    for (const definition of definitions) {
      if (definition.kind === 'api') continue;
      const fn = ServiceFunction.forDefinition(this, definition, resources, {
        logLevel: props.logLevel,
        metricsNamespace: props.metricsNamespace,
        appUrl: props.appUrl,
        tracing: props.tracing,
        epsConverter: props.epsConverter,
      });
      functions[definition.name] = fn;

      if (definition.kind === 'stream') {
        this.consumeTableStream(resources, fn, definition);
      } else if (definition.kind === 'websocket') {
        this.routeLiveSocket(fn, definition);
      } else if (definition.kind === 'schedule') {
        this.runOnSchedule(fn, definition);
      } else {
        const source = definition.deadLetters ? resources.deadLetterQueues[definition.queue] : resources.queues[definition.queue];
        fn.addEventSource(
          new SqsEventSource(source, {
            batchSize: QUEUES[definition.queue].batchSize,
            reportBatchItemFailures: true,
            maxConcurrency: maxConcurrencyOf(definition.queue),
          }),
        );
      }
    }
    this.functions = functions;

    this.alarmTopic = new AlarmTopic(this, 'AlarmTopic', { email: props.alarmEmail }).topic;
    this.alarms = new ServiceAlarms(this, 'Alarms', { topic: this.alarmTopic })
      .watchFunctions(functions)
      .watchQueueAges(resources.queues)
      .watchTable(resources.table)
      .watchConversionFailureRate(props.metricsNamespace);
    const liveFanOut = functions['live-fanout'];
    if (liveFanOut) this.alarms.watchLiveUpdates(this.liveApi, LIVE_STAGE, liveFanOut);
    for (const name of Object.keys(QUEUES) as QueueName[]) this.alarms.watchDeadLetters(name, resources.deadLetterQueues[name]);
    for (const [name, queue] of Object.entries(this.streamFailures)) this.alarms.watchDeadLetters(`${name}-stream-failures`, queue);
    for (const [name, queue] of Object.entries(this.scheduleFailures)) this.alarms.watchDeadLetters(`${name}-schedule-failures`, queue);
    // Conversions that died, marked failed and kept for `admin queue redrive` (the hold queue).
    for (const [name, queue] of Object.entries(resources.deadLetterHolds)) if (queue) this.alarms.watchDeadLetters(`${name}-hold`, queue);
    this.exportMonitoring();
  }

  /**
   * The alarm topic and the worker functions as seen from another stack (the API stack), imported
   * by export name; the importing stack is made to deploy after this one.
   */
  importMonitoring(scope: Construct): WorkersMonitoring {
    const consumer = Stack.of(scope);
    if (consumer === this) throw new Error('importMonitoring is for the API stack; use the constructs directly here.');
    consumer.addStackDependency(this, 'notifies the alarm topic and shows the workers on its dashboard');
    const names = workersExportNames(this.stackName);
    const functions = Object.fromEntries(
      Object.keys(this.functions).map((name) => [
        name,
        LambdaFunction.fromFunctionName(scope, `${pascalCase(name)}FunctionRef`, Fn.importValue(names.functionName(name))),
      ]),
    );
    return { alarmTopic: Topic.fromTopicArn(scope, 'AlarmTopicRef', Fn.importValue(names.alarmTopicArn)), functions };
  }

  private exportMonitoring(): void {
    const names = workersExportNames(this.stackName);
    new CfnOutput(this, 'LiveUrlOutput', {
      value: this.liveStage.url,
      exportName: names.liveUrl,
      description: 'The live-update WebSocket URL (tickets from POST /api/v2/live/tickets)',
    });
    new CfnOutput(this, 'AlarmTopicArnOutput', {
      value: this.alarmTopic.topicArn,
      exportName: names.alarmTopicArn,
      description: 'The topic every alarm notifies',
    });
    for (const [name, fn] of Object.entries(this.functions)) {
      new CfnOutput(this, `${pascalCase(name)}FunctionNameOutput`, { value: fn.functionName, exportName: names.functionName(name) });
    }
  }

  /** The live-update socket's URL as seen from another stack (the API stack's ticket function), imported by export name. */
  importLiveUrl(scope: Construct): string {
    if (Stack.of(scope) === this) return this.liveStage.url;
    Stack.of(scope).addStackDependency(this, 'hands out the live-update socket URL');
    return Fn.importValue(workersExportNames(this.stackName).liveUrl);
  }

  /**
   * The live-update WebSocket API and its stage (throttled like the HTTP API's). Its routes are the
   * websocket function's (routeLiveSocket); the API Gateway authenticates nobody: \$connect takes a
   * single-use ticket, checked by the function.
   */
  private createLiveApi(): { api: WebSocketApi; stage: WebSocketStage } {
    const api = new WebSocketApi(this, 'LiveApi', {
      apiName: `${this.stackName}-live`,
      description: 'Review Board Service live updates (DESIGN.md "Live updates")',
      routeSelectionExpression: '$request.body.type',
    });
    const stage = new WebSocketStage(this, 'LiveStage', {
      webSocketApi: api,
      stageName: LIVE_STAGE,
      autoDeploy: true,
      throttle: { rateLimit: 100, burstLimit: 200 },
    });
    Validations.of(api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Callers are authenticated in the function: $connect takes a single-use ticket that POST /api/v2/live/tickets issued to an authenticated caller, and every subscribe is authorized like GET /markups/{id}.',
    });
    Validations.of(stage).acknowledge({
      id: 'AwsSolutions-APIG1',
      reason: 'Each connect, subscribe and disconnect is logged by the live-socket function with its connection id.',
    });
    return { api, stage };
  }

  /** One route of the live-update WebSocket API per entry of the websocket function's route group, all to that function. */
  private routeLiveSocket(fn: ServiceFunction, definition: WebSocketFunction): void {
    const integration = new WebSocketLambdaIntegration(`${pascalCase(definition.name)}Integration`, fn);
    for (const route of definition.routes) this.liveApi.addRoute(route, { integration });
  }

  /** A queue that receives what an event source or a rule gave up on (14 days, SSE, TLS only); alarmed by the constructor. */
  private failureQueue(id: string, what: string): Queue {
    const queue = new Queue(this, id, { retentionPeriod: Duration.days(14), encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
    Validations.of(queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: `This queue is ${what}: it is itself the dead-letter target and has no consumer to dead-letter from.`,
    });
    return queue;
  }

  /**
   * Invokes a scheduled function every `everyMinutes` from an EventBridge rule (asynchronously: two
   * retries within an hour), whose target sends an invocation it gave up on to a dead-letter queue,
   * which alarms as the other dead-letter queues do. The rule may invoke this one function only.
   */
  private runOnSchedule(fn: ServiceFunction, definition: ScheduledFunction): void {
    const failures = this.failureQueue(
      `${pascalCase(definition.name)}ScheduleFailures`,
      'the dead-letter queue of the schedule rule target',
    );
    this.scheduleFailures[definition.name] = failures;
    new Rule(this, `${pascalCase(definition.name)}Schedule`, {
      description: `Runs ${definition.name} every ${definition.everyMinutes} minutes.`,
      schedule: Schedule.rate(Duration.minutes(definition.everyMinutes)),
      targets: [new LambdaFunctionTarget(fn, { deadLetterQueue: failures, retryAttempts: 2, maxEventAge: Duration.hours(1) })],
    });
  }

  /**
   * Feeds the table's stream to a stream consumer as Lambda's event source mapping: from the oldest
   * record kept (TRIM_HORIZON: records written before the mapping existed are still fanned out),
   * only what the registry's filter matches, resuming at the first failed record of a batch
   * (reportBatchItemFailures) and bisecting a batch that fails as a whole, retrying until it
   * succeeds (STREAM_RETRY_ATTEMPTS). A record the mapping gives up on anyway is described (shard
   * and sequence numbers) on an on-failure queue, so it can be found and replayed while the stream keeps it.
   */
  private consumeTableStream(resources: ServiceResources, fn: ServiceFunction, definition: StreamConsumerFunction): void {
    const failures = this.failureQueue(
      `${pascalCase(definition.name)}StreamFailures`,
      'the on-failure destination of the stream event source',
    );
    this.streamFailures[definition.name] = failures;
    fn.addEventSource(
      new DynamoEventSource(resources.table, {
        startingPosition: StartingPosition.TRIM_HORIZON,
        batchSize: STREAM_BATCH_SIZE,
        filters: [FilterCriteria.filter(definition.filter)],
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        retryAttempts: STREAM_RETRY_ATTEMPTS,
        onFailure: new SqsDlq(failures),
      }),
    );
    Validations.of(fn.executionRole).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'dynamodb:ListStreams has no resource-level permissions (CDK grants it on *); every read action of the grant is scoped to the one table stream.',
    });
  }
}
