import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi, IWebSocketApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueName } from '../../shared/queues.js';
import type { MetricName } from '../../shared/metrics.js';
import { pascalCase } from './service-function.js';

/**
 * How one alarm fires: when its metric, aggregated over `periodMinutes`, is above `threshold` in
 * `evaluationPeriods` consecutive periods. Every alarm compares with "greater than", so a rule
 * reads the same in this table, in the template and in docs/operators.md.
 */
export interface AlarmRule {
  readonly threshold: number;
  readonly periodMinutes: number;
  readonly evaluationPeriods: number;
}

/**
 * Every alarm's threshold, in one place; the alarm table of docs/operators.md explains each, and
 * test/infra/monitoring.test.ts pins them in the templates.
 */
export const ALARM_RULES = {
  /**
   * Lambda Errors (Sum): handlers map their errors to responses or `batchItemFailures`, so an
   * invocation error is what escaped that (a timeout, running out of memory, an init failure).
   */
  functionErrors: { threshold: 0, periodMinutes: 5, evaluationPeriods: 1 },
  /** Lambda Throttles (Sum): no function reserves concurrency, so a throttle means the account's concurrency ran out. */
  functionThrottles: { threshold: 0, periodMinutes: 5, evaluationPeriods: 1 },
  /** Percentage of HTTP API requests answered 5xx, over periods with at least `minRequests` requests. */
  api5xxRate: { threshold: 5, periodMinutes: 5, evaluationPeriods: 2, minRequests: 20 },
  /** p99 of the HTTP API's Latency in milliseconds (cold starts included). */
  apiLatencyP99: { threshold: 3000, periodMinutes: 5, evaluationPeriods: 3 },
  /** Maximum of ApproximateNumberOfMessagesVisible on a dead-letter queue. */
  deadLetters: { threshold: 0, periodMinutes: 5, evaluationPeriods: 1 },
  /**
   * Maximum ApproximateAgeOfOldestMessage in seconds, for the queues named here. Conversion: twice
   * the worker's 900 s timeout. Webhook delivery: twice SQS's longest message delay (900 s), which
   * spaces the retries.
   */
  oldestMessageAge: {
    conversion: { threshold: 1800, periodMinutes: 5, evaluationPeriods: 1 },
    webhookDelivery: { threshold: 1800, periodMinutes: 5, evaluationPeriods: 1 },
  } satisfies Partial<Record<QueueName, AlarmRule>>,
  /** DynamoDB ThrottledRequests (Sum over TABLE_OPERATIONS); the SDK retries a few, not a stream of them. */
  tableThrottledRequests: { threshold: 10, periodMinutes: 5, evaluationPeriods: 1 },
  /** DynamoDB SystemErrors (Sum over TABLE_OPERATIONS): DynamoDB's own 500s. */
  tableSystemErrors: { threshold: 5, periodMinutes: 5, evaluationPeriods: 1 },
  /** Percentage of conversions that failed, over periods with at least `minConversions` conversions. */
  conversionFailureRate: { threshold: 20, periodMinutes: 15, evaluationPeriods: 1, minConversions: 5 },
  /**
   * The live-update WebSocket API's ExecutionError and IntegrationError (Sum): a route's function
   * could not be invoked or failed. Any is worth a look: clients then see their subscribe unanswered.
   */
  liveSocketErrors: { threshold: 0, periodMinutes: 5, evaluationPeriods: 1 },
  /**
   * Maximum IteratorAge of the live fan-out's stream event source, in milliseconds: how far live
   * updates lag behind the writes (the target is well under a second).
   */
  liveFanOutIteratorAge: { threshold: 10_000, periodMinutes: 5, evaluationPeriods: 2 },
} as const;

/**
 * The table operations the service calls (shared/db, the admin CLI's Scan aside, and the stream
 * reads of the fan-out's event source), whose ThrottledRequests and SystemErrors are summed: both
 * metrics exist only per operation. An alarm's metric math takes at most 10 metrics.
 */
export const TABLE_OPERATIONS: readonly Operation[] = [
  Operation.GET_ITEM,
  Operation.BATCH_GET_ITEM,
  Operation.QUERY,
  Operation.PUT_ITEM,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.BATCH_WRITE_ITEM,
  Operation.TRANSACT_WRITE_ITEMS,
  Operation.BATCH_EXECUTE_STATEMENT,
  Operation.GET_RECORDS,
];

/** The conversion worker's own metrics (Powertools, EMF): their names and the dimension they carry. */
export const CONVERSION_METRICS = {
  succeeded: 'ConversionSucceeded' satisfies MetricName,
  failed: 'ConversionFailed' satisfies MetricName,
  // The worker's POWERTOOLS_SERVICE_NAME: its registry name.
  dimensions: { service: 'conversion' },
} as const;

const minutes = (rule: AlarmRule) => Duration.minutes(rule.periodMinutes);

/** Percentage of HTTP API requests answered 5xx; 0 in periods with fewer than the rule's minimum of requests. */
export function apiServerErrorRate(api: IHttpApi): MathExpression {
  const rule = ALARM_RULES.api5xxRate;
  return new MathExpression({
    expression: `IF(requests >= ${rule.minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
    usingMetrics: { errors: api.metricServerError({ statistic: 'Sum' }), requests: api.metricCount({ statistic: 'Sum' }) },
    period: minutes(rule),
    label: '5xx rate (%)',
  });
}

/**
 * One of the conversion worker's own metrics, published through Powertools (EMF, `recordMetrics` in
 * shared/domain/markups/conversion-outcome.ts) in the service's namespace (CDK context `metricsNamespace`),
 * a datapoint per settled conversion, with only the `service` dimension.
 */
export function conversionOutcome(namespace: string, metricName: string): Metric {
  return new Metric({
    namespace,
    metricName,
    dimensionsMap: { ...CONVERSION_METRICS.dimensions },
    statistic: 'Sum',
    period: minutes(ALARM_RULES.conversionFailureRate),
  });
}

/**
 * Percentage of conversions that failed; 0 in periods with fewer than the rule's minimum of
 * conversions (so one bad file out of two is no incident). A period may hold one outcome and not
 * the other: FILL makes the missing one 0.
 */
export function conversionFailureRate(namespace: string): MathExpression {
  const rule = ALARM_RULES.conversionFailureRate;
  const failed = 'FILL(failed, 0)';
  const total = `(${failed} + FILL(succeeded, 0))`;
  return new MathExpression({
    expression: `IF(${total} >= ${rule.minConversions}, 100 * ${failed} / ${total}, 0)`,
    usingMetrics: {
      failed: conversionOutcome(namespace, CONVERSION_METRICS.failed),
      succeeded: conversionOutcome(namespace, CONVERSION_METRICS.succeeded),
    },
    period: minutes(rule),
    label: 'Conversion failure rate (%)',
  });
}

/**
 * A per-operation DynamoDB metric summed over TABLE_OPERATIONS. Not aws-dynamodb's
 * `metric…ForOperations`: it adds the operations with `+`, and DynamoDB publishes these metrics
 * only for an operation that had one, so a sum that needs every operation's datapoint would almost
 * never have one. FILL makes a quiet operation 0 and SUM adds whatever is there.
 */
function tableOperationsSum(table: ITable, metricName: string, rule: AlarmRule, label: string): MathExpression {
  const usingMetrics = Object.fromEntries(
    TABLE_OPERATIONS.map((operation) => [
      operation.toLowerCase(),
      table.metric(metricName, {
        dimensionsMap: { TableName: table.tableName, Operation: operation },
        statistic: 'Sum',
        period: minutes(rule),
      }),
    ]),
  );
  return new MathExpression({
    expression: `SUM(FILL([${Object.keys(usingMetrics).join(', ')}], 0))`,
    usingMetrics,
    period: minutes(rule),
    label,
  });
}

/** The table's ThrottledRequests over TABLE_OPERATIONS. */
export const tableThrottledRequests = (table: ITable) =>
  tableOperationsSum(table, 'ThrottledRequests', ALARM_RULES.tableThrottledRequests, 'Throttled requests');

/** The table's SystemErrors over TABLE_OPERATIONS. */
export const tableSystemErrors = (table: ITable) =>
  tableOperationsSum(table, 'SystemErrors', ALARM_RULES.tableSystemErrors, 'System errors');

export interface AlarmTopicProps {
  /** Subscribed by email when given (CDK context `alarmEmail`). */
  readonly email?: string;
}

/**
 * The one SNS topic every alarm notifies. Encrypted with a key of its own: CloudWatch cannot
 * publish to a topic under the AWS-managed SNS key (its key policy cannot name CloudWatch), so this
 * key lets CloudWatch encrypt, and the topic policy lets alarms of this account publish, over TLS only.
 */
export class AlarmTopic extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');
    // Destroyed with the stack: SNS keeps no message, so nothing encrypted with it outlives the topic.
    const key = new Key(this, 'Key', {
      description: 'Review Board Service: encrypts the alarm topic',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    key.grant(cloudWatch, 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new Topic(this, 'Topic', { displayName: `${stack.stackName} alarms`, masterKey: key, enforceSSL: true });
    this.topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AlarmsOfThisAccountPublish',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:*` },
        },
      }),
    );
    if (props.email) this.topic.addSubscription(new EmailSubscription(props.email));
  }
}

export interface ServiceAlarmsProps {
  /** Where every alarm notifies, when it fires and when it clears. */
  readonly topic: ITopic;
}

/**
 * The alarms of one stack, each made from a rule of ALARM_RULES and named `<stack>-<what>` (the
 * names the alarm table of docs/operators.md uses); every one notifies the topic on ALARM and on OK. Missing
 * data never breaches: a quiet service, or a metric not yet published, is not an incident.
 */
export class ServiceAlarms extends Construct {
  readonly alarms: Alarm[] = [];
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    this.action = new SnsAction(props.topic);
  }

  /** Errors and throttles of each function, keyed by its registry name. */
  watchFunctions(functions: Readonly<Record<string, IFunction>>): this {
    for (const [name, fn] of Object.entries(functions)) {
      this.add(
        `function-${name}-errors`,
        fn.metricErrors({ statistic: 'Sum' }),
        ALARM_RULES.functionErrors,
        `The ${name} function failed invocations (an error its handler did not turn into a response: a timeout, out of memory, a crash).`,
      );
      this.add(
        `function-${name}-throttles`,
        fn.metricThrottles({ statistic: 'Sum' }),
        ALARM_RULES.functionThrottles,
        `The ${name} function was throttled: the account's Lambda concurrency ran out.`,
      );
    }
    return this;
  }

  /** The HTTP API's 5xx rate and p99 latency. */
  watchHttpApi(api: IHttpApi): this {
    this.add(
      'api-5xx-rate',
      apiServerErrorRate(api),
      ALARM_RULES.api5xxRate,
      'More than the threshold percentage of API requests were answered 5xx.',
    );
    this.add(
      'api-latency-p99',
      api.metricLatency({ statistic: 'p99' }),
      ALARM_RULES.apiLatencyP99,
      'The p99 latency of the HTTP API is above the threshold (ms).',
    );
    return this;
  }

  /**
   * The live-update WebSocket API's errors (its routes' integrations failing) and its fan-out's lag
   * behind the table's stream; the fan-out's own errors and throttles are `watchFunctions`'.
   */
  watchLiveUpdates(api: IWebSocketApi, stageName: string, fanOut: IFunction): this {
    const dimensionsMap = { ApiId: api.apiId, Stage: stageName };
    const errors = new MathExpression({
      expression: 'execution + integration',
      usingMetrics: {
        execution: new Metric({ namespace: 'AWS/ApiGateway', metricName: 'ExecutionError', dimensionsMap, statistic: 'Sum' }),
        integration: new Metric({ namespace: 'AWS/ApiGateway', metricName: 'IntegrationError', dimensionsMap, statistic: 'Sum' }),
      },
      period: Duration.minutes(ALARM_RULES.liveSocketErrors.periodMinutes),
      label: 'Live socket errors',
    });
    this.add(
      'live-socket-errors',
      errors,
      ALARM_RULES.liveSocketErrors,
      'The live-update WebSocket API failed to run a route (its function could not be invoked or failed).',
    );
    this.add(
      'live-fanout-iterator-age',
      fanOut.metric('IteratorAge', { statistic: 'Maximum' }),
      ALARM_RULES.liveFanOutIteratorAge,
      'Live updates lag behind the writes: the live fan-out reads the table stream more than the threshold (ms) behind.',
    );
    return this;
  }

  /** A dead-letter queue holding any message (`label` names it in the alarm: `queue-<label>-dead-letters`). */
  watchDeadLetters(label: string, queue: IQueue): this {
    this.add(
      `queue-${label}-dead-letters`,
      queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum' }),
      ALARM_RULES.deadLetters,
      `The ${label} dead-letter queue holds messages that failed every attempt.`,
    );
    return this;
  }

  /** The age of the oldest message of each queue ALARM_RULES.oldestMessageAge names. */
  watchQueueAges(queues: Readonly<Record<QueueName, IQueue>>): this {
    for (const [name, rule] of Object.entries(ALARM_RULES.oldestMessageAge) as [QueueName, AlarmRule][]) {
      this.add(
        `queue-${name}-oldest-message-age`,
        queues[name].metricApproximateAgeOfOldestMessage({ statistic: 'Maximum' }),
        rule,
        `The oldest message of the ${name} queue has waited longer than the threshold (s).`,
      );
    }
    return this;
  }

  /** The table's throttled requests and system errors, summed over TABLE_OPERATIONS. */
  watchTable(table: ITable): this {
    this.add(
      'table-throttled-requests',
      tableThrottledRequests(table),
      ALARM_RULES.tableThrottledRequests,
      'DynamoDB throttled requests to the table.',
    );
    this.add(
      'table-system-errors',
      tableSystemErrors(table),
      ALARM_RULES.tableSystemErrors,
      'DynamoDB answered requests to the table with internal errors.',
    );
    return this;
  }

  /** The share of conversions that failed, from the conversion worker's own metrics in `namespace` (see conversionOutcome). */
  watchConversionFailureRate(namespace: string): this {
    this.add(
      'conversion-failure-rate',
      conversionFailureRate(namespace),
      ALARM_RULES.conversionFailureRate,
      'More than the threshold percentage of conversions failed.',
    );
    return this;
  }

  private add(name: string, metric: IMetric, rule: AlarmRule, meaning: string): Alarm {
    const stackName = Stack.of(this).stackName;
    const alarm = new Alarm(this, pascalCase(name), {
      alarmName: `${stackName}-${name}`,
      alarmDescription: `${meaning} What to do: docs/operators.md, "Alarms and the dashboard".`,
      metric: metric instanceof Metric ? metric.with({ period: minutes(rule) }) : metric,
      threshold: rule.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: rule.evaluationPeriods,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(this.action);
    alarm.addOkAction(this.action);
    this.alarms.push(alarm);
    return alarm;
  }
}
