import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionDefinition } from '../../functions/registry.js';
import { deadLetterHoldOf, QUEUES, type QueueName } from '../../shared/queues.js';
import { dataExportNames } from '../../infra/stacks/data-stack.js';
import { workersExportNames } from '../../infra/stacks/workers-stack.js';
import { findByLogicalIdPrefix, functionResource, synthesizeApp, templateOf, type CfnResource, type SynthesizedApp } from './synth-app.js';

const SYNTH_TIMEOUT_MS = 240_000;
const ALARM_EMAIL = 'oncall@review.example.com';
const NAMESPACE = 'Acme/ReviewBoard';
const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];
/** The operations whose ThrottledRequests and SystemErrors the table alarms add up (at most 10: an alarm's metric math limit). */
const TABLE_OPERATIONS = [
  'GetItem',
  'BatchGetItem',
  'Query',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'BatchExecuteStatement',
  'GetRecords',
];

let synthesized: SynthesizedApp;
let configured: SynthesizedApp;

beforeAll(() => {
  synthesized = synthesizeApp();
  configured = synthesizeApp({ alarmEmail: ALARM_EMAIL, metricsNamespace: NAMESPACE });
}, SYNTH_TIMEOUT_MS);

const alarmsOf = (template: Template) =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm') as Record<string, CfnResource>).map((alarm) => alarm.Properties!);
function alarmNamed(template: Template, name: string): Record<string, any> {
  const matches = alarmsOf(template).filter((alarm) => alarm.AlarmName === name);
  if (matches.length !== 1) throw new Error(`Expected one alarm named ${name}, found ${matches.length}.`);
  return matches[0]!;
}
const topicId = (app: SynthesizedApp) => findByLogicalIdPrefix(app.templates.workers, 'AWS::SNS::Topic', 'AlarmTopic')[0];
/** How an alarm of each stack names the one topic: by reference in the workers stack, by export in the API stack. */
const topicOf = (app: SynthesizedApp, stack: 'workers' | 'api') =>
  stack === 'workers' ? { Ref: topicId(app) } : { 'Fn::ImportValue': workersExportNames(app.workers.stackName).alarmTopicArn };
const stackOf = (definition: FunctionDefinition) => (definition.kind === 'api' ? 'api' : 'workers');
const notifies = (app: SynthesizedApp, stack: 'workers' | 'api') => ({
  AlarmActions: [topicOf(app, stack)],
  OKActions: [topicOf(app, stack)],
});
const rule = (threshold: number, periodSeconds: number, evaluationPeriods: number) => ({
  Threshold: threshold,
  ComparisonOperator: 'GreaterThanThreshold',
  EvaluationPeriods: evaluationPeriods,
  TreatMissingData: 'notBreaching',
  periodSeconds,
});

/** A simple (non-math) alarm: its metric, statistic, dimensions and rule. */
function expectMetricAlarm(
  alarm: Record<string, any>,
  metric: { Namespace: string; MetricName: string; Dimensions: unknown[]; statistic: string },
  expected: ReturnType<typeof rule>,
) {
  const { periodSeconds, ...comparison } = expected;
  const statistic = metric.statistic.startsWith('p') ? { ExtendedStatistic: metric.statistic } : { Statistic: metric.statistic };
  expect(alarm).toMatchObject({
    Namespace: metric.Namespace,
    MetricName: metric.MetricName,
    Dimensions: metric.Dimensions,
    Period: periodSeconds,
    ...statistic,
    ...comparison,
  });
}

/** The metrics of a math alarm by id, and the expression it returns. */
function mathOf(alarm: Record<string, any>) {
  const queries = alarm.Metrics as Record<string, any>[];
  const returned = queries.filter((query) => query.ReturnData !== false);
  expect(returned).toHaveLength(1);
  return {
    expression: returned[0]!.Expression as string,
    metrics: Object.fromEntries(queries.filter((query) => query.MetricStat).map((query) => [query.Id, query.MetricStat])),
  };
}

const importedQueueName = (exportName: string) => ({ 'Fn::Select': [5, { 'Fn::Split': [':', { 'Fn::ImportValue': exportName }] }] });

describe('function alarms: errors and throttles of every function of the registry (issue 16 item 2)', () => {
  it.each(FUNCTIONS.map((definition) => [definition.name, definition] as const))(
    'alarms when %s has any error or throttle in 5 minutes, notifying the topic',
    (name, definition) => {
      const template = templateOf(synthesized, definition);
      const stack = stackOf(definition);
      const [functionId] = functionResource(template, definition);
      const dimensions = [{ Name: 'FunctionName', Value: { Ref: functionId } }];
      const stackName = stack === 'api' ? synthesized.api.stackName : synthesized.workers.stackName;

      for (const [metricName, suffix] of [
        ['Errors', 'errors'],
        ['Throttles', 'throttles'],
      ] as const) {
        const alarm = alarmNamed(template, `${stackName}-function-${name}-${suffix}`);
        expectMetricAlarm(
          alarm,
          { Namespace: 'AWS/Lambda', MetricName: metricName, Dimensions: dimensions, statistic: 'Sum' },
          rule(0, 300, 1),
        );
        expect(alarm).toMatchObject(notifies(synthesized, stack));
      }
    },
  );
});

describe('HTTP API alarms: 5xx rate and p99 latency', () => {
  const apiId = () => ({ Ref: findByLogicalIdPrefix(synthesized.templates.api, 'AWS::ApiGatewayV2::Api', 'HttpApi')[0] });

  it('alarms when more than 5% of requests are 5xx in two 5-minute periods running, counting only periods of 20 requests or more', () => {
    const alarm = alarmNamed(synthesized.templates.api, `${synthesized.api.stackName}-api-5xx-rate`);
    const { expression, metrics } = mathOf(alarm);
    const { periodSeconds, ...comparison } = rule(5, 300, 2);

    expect(expression).toBe('IF(requests >= 20, 100 * FILL(errors, 0) / requests, 0)');
    for (const [id, metricName] of [
      ['errors', '5xx'],
      ['requests', 'Count'],
    ] as const) {
      expect(metrics[id]).toEqual({
        Metric: { Namespace: 'AWS/ApiGateway', MetricName: metricName, Dimensions: [{ Name: 'ApiId', Value: apiId() }] },
        Period: periodSeconds,
        Stat: 'Sum',
      });
    }
    expect(alarm).toMatchObject({ ...comparison, ...notifies(synthesized, 'api') });
  });

  it('alarms when the p99 latency is above 3 s in three 5-minute periods running', () => {
    const alarm = alarmNamed(synthesized.templates.api, `${synthesized.api.stackName}-api-latency-p99`);

    expectMetricAlarm(
      alarm,
      { Namespace: 'AWS/ApiGateway', MetricName: 'Latency', Dimensions: [{ Name: 'ApiId', Value: apiId() }], statistic: 'p99' },
      rule(3000, 300, 3),
    );
    expect(alarm).toMatchObject(notifies(synthesized, 'api'));
  });
});

describe('queue alarms: dead letters and the age of the oldest message', () => {
  const names = () => dataExportNames(synthesized.data.stackName);

  it.each(QUEUE_NAMES)('alarms as soon as the %s dead-letter queue holds a message', (name) => {
    const alarm = alarmNamed(synthesized.templates.workers, `${synthesized.workers.stackName}-queue-${name}-dead-letters`);

    expectMetricAlarm(
      alarm,
      {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: importedQueueName(names().deadLetterQueueArn(name)) }],
        statistic: 'Maximum',
      },
      rule(0, 300, 1),
    );
    expect(alarm).toMatchObject(notifies(synthesized, 'workers'));
  });

  it("alarms as soon as the stream fan-out's on-failure queue (its dead-letter target) holds a message", () => {
    const [queueId] = findByLogicalIdPrefix(synthesized.templates.workers, 'AWS::SQS::Queue', 'WebhookFanoutStreamFailures');
    const alarm = alarmNamed(
      synthesized.templates.workers,
      `${synthesized.workers.stackName}-queue-webhook-fanout-stream-failures-dead-letters`,
    );

    expectMetricAlarm(
      alarm,
      {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
        statistic: 'Maximum',
      },
      rule(0, 300, 1),
    );
    expect(alarm).toMatchObject(notifies(synthesized, 'workers'));
  });

  it("alarms as soon as the pending-work sweep's schedule dead-letter queue holds a message", () => {
    const [queueId] = findByLogicalIdPrefix(synthesized.templates.workers, 'AWS::SQS::Queue', 'PendingWorkSweepScheduleFailures');
    const alarm = alarmNamed(
      synthesized.templates.workers,
      `${synthesized.workers.stackName}-queue-pending-work-sweep-schedule-failures-dead-letters`,
    );

    expectMetricAlarm(
      alarm,
      {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
        statistic: 'Maximum',
      },
      rule(0, 300, 1),
    );
    expect(alarm).toMatchObject(notifies(synthesized, 'workers'));
  });

  it('alarms as soon as the conversion hold queue (dead conversions kept for a redrive) holds a message', () => {
    const alarm = alarmNamed(synthesized.templates.workers, `${synthesized.workers.stackName}-queue-conversion-hold-dead-letters`);

    expectMetricAlarm(
      alarm,
      {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: importedQueueName(names().deadLetterHoldArn('conversion')) }],
        statistic: 'Maximum',
      },
      rule(0, 300, 1),
    );
    expect(alarm).toMatchObject(notifies(synthesized, 'workers'));
  });

  it.each(['conversion', 'webhookDelivery'] as const)('alarms when the oldest message of the %s queue is older than 30 minutes', (name) => {
    const alarm = alarmNamed(synthesized.templates.workers, `${synthesized.workers.stackName}-queue-${name}-oldest-message-age`);

    expectMetricAlarm(
      alarm,
      {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: importedQueueName(names().queueArn(name)) }],
        statistic: 'Maximum',
      },
      rule(1800, 300, 1),
    );
    expect(alarm).toMatchObject(notifies(synthesized, 'workers'));
  });

  it('puts no age alarm on the thumbnails queue (thumbnails are best effort)', () => {
    expect(alarmsOf(synthesized.templates.workers).map((alarm) => alarm.AlarmName)).not.toContain(
      `${synthesized.workers.stackName}-queue-thumbnails-oldest-message-age`,
    );
  });
});

describe('table alarms: DynamoDB throttled requests and system errors, over every operation the service calls', () => {
  const tableName = () => ({ 'Fn::ImportValue': dataExportNames(synthesized.data.stackName).tableName });

  it.each([
    ['throttled-requests', 'ThrottledRequests', 10],
    ['system-errors', 'SystemErrors', 5],
  ] as const)('table-%s: alarms when %s, summed over the operations, is above %i in 5 minutes', (suffix, metricName, threshold) => {
    const alarm = alarmNamed(synthesized.templates.workers, `${synthesized.workers.stackName}-table-${suffix}`);
    const { expression, metrics } = mathOf(alarm);
    const { periodSeconds, ...comparison } = rule(threshold, 300, 1);
    const ids = TABLE_OPERATIONS.map((operation) => operation.toLowerCase());

    // FILL: DynamoDB publishes these only for an operation that had one; a plain a + b would need them all.
    expect(expression).toBe(`SUM(FILL([${ids.join(', ')}], 0))`);
    expect(Object.keys(metrics)).toHaveLength(TABLE_OPERATIONS.length);
    TABLE_OPERATIONS.forEach((operation, index) => {
      expect(metrics[ids[index]!]).toEqual({
        Metric: {
          Namespace: 'AWS/DynamoDB',
          MetricName: metricName,
          Dimensions: [
            { Name: 'Operation', Value: operation },
            { Name: 'TableName', Value: tableName() },
          ],
        },
        Period: periodSeconds,
        Stat: 'Sum',
      });
    });
    expect(alarm).toMatchObject({ ...comparison, ...notifies(synthesized, 'workers') });
  });
});

describe("conversion failure rate (the conversion worker's ConversionFailed and ConversionSucceeded, context metricsNamespace)", () => {
  const alarmOf = (app: SynthesizedApp) => alarmNamed(app.templates.workers, `${app.workers.stackName}-conversion-failure-rate`);

  it('alarms when more than 20% of conversions failed in 15 minutes, counting only periods of 5 conversions or more', () => {
    const alarm = alarmOf(synthesized);
    const { expression, metrics } = mathOf(alarm);
    const { periodSeconds, ...comparison } = rule(20, 900, 1);

    expect(expression).toBe(
      'IF((FILL(failed, 0) + FILL(succeeded, 0)) >= 5, 100 * FILL(failed, 0) / (FILL(failed, 0) + FILL(succeeded, 0)), 0)',
    );
    for (const [id, metricName] of [
      ['failed', 'ConversionFailed'],
      ['succeeded', 'ConversionSucceeded'],
    ] as const) {
      expect(metrics[id]).toEqual({
        Metric: { Namespace: 'ReviewBoardService', MetricName: metricName, Dimensions: [{ Name: 'service', Value: 'conversion' }] },
        Period: periodSeconds,
        Stat: 'Sum',
      });
    }
    expect(alarm).toMatchObject({ ...comparison, ...notifies(synthesized, 'workers') });
  });

  it('reads the namespace from -c metricsNamespace, and refuses one that is not a CloudWatch namespace or is AWS/', () => {
    const { metrics } = mathOf(alarmOf(configured));

    expect(metrics.failed.Metric.Namespace).toBe(NAMESPACE);
    expect(metrics.succeeded.Metric.Namespace).toBe(NAMESPACE);
    expect(() => synthesizeApp({ metricsNamespace: 'AWS/Lambda' })).toThrow(/metricsNamespace/);
    expect(() => synthesizeApp({ metricsNamespace: 'review board' })).toThrow(/metricsNamespace/);
  });
});

describe('no alarm beyond the ones above', () => {
  it("has two per function, the API's two, one per dead-letter queue, hold queue, stream consumer and scheduled function, two queue ages, two table alarms, the conversion failure rate and the live updates' two", () => {
    const workers = FUNCTIONS.filter((definition) => definition.kind !== 'api');
    const streamConsumers = workers.filter((definition) => definition.kind === 'stream' || definition.kind === 'schedule');
    const HELD_QUEUE_NAMES = QUEUE_NAMES.filter((name) => deadLetterHoldOf(name) !== undefined);

    synthesized.templates.api.resourceCountIs('AWS::CloudWatch::Alarm', 2 * (FUNCTIONS.length - workers.length) + 2);
    synthesized.templates.workers.resourceCountIs(
      'AWS::CloudWatch::Alarm',
      2 * workers.length + QUEUE_NAMES.length + HELD_QUEUE_NAMES.length + streamConsumers.length + 2 + 2 + 1 + 2,
    );
    synthesized.templates.data.resourceCountIs('AWS::CloudWatch::Alarm', 0);
  });
});

describe('the alarm topic: one SNS topic in the workers stack, KMS-encrypted, TLS only, optional email (context alarmEmail)', () => {
  it('is the only topic, encrypted with a rotated key CloudWatch may use', () => {
    const [keyId, key] = findByLogicalIdPrefix(synthesized.templates.workers, 'AWS::KMS::Key', 'AlarmTopicKey');
    const [, topic] = findByLogicalIdPrefix(synthesized.templates.workers, 'AWS::SNS::Topic', 'AlarmTopic');

    for (const template of Object.values(synthesized.templates))
      template.resourceCountIs('AWS::SNS::Topic', template === synthesized.templates.workers ? 1 : 0);
    expect(topic.Properties?.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    expect(key.Properties?.EnableKeyRotation).toBe(true);
    expect(key.Properties?.KeyPolicy.Statement).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      }),
    );
  });

  it("denies publishing without TLS and lets only this account's alarms publish", () => {
    const topic = { Ref: topicId(synthesized) };
    const policies = Object.values(synthesized.templates.workers.findResources('AWS::SNS::TopicPolicy') as Record<string, CfnResource>);

    expect(policies).toHaveLength(1);
    expect(policies[0]!.Properties?.Topics).toEqual([topic]);
    expect(policies[0]!.Properties?.PolicyDocument.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Action: 'sns:Publish',
        Principal: '*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
      expect.objectContaining({
        Effect: 'Allow',
        Action: 'sns:Publish',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Resource: topic,
        Condition: expect.objectContaining({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
      }),
    ]);
  });

  it('has no subscription without alarmEmail', () => {
    for (const template of Object.values(synthesized.templates)) template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  it('subscribes -c alarmEmail by email, and refuses a value that is not an email address', () => {
    configured.templates.workers.resourceCountIs('AWS::SNS::Subscription', 1);
    configured.templates.workers.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: ALARM_EMAIL,
      TopicArn: { Ref: topicId(configured) },
    });
    expect(() => synthesizeApp({ alarmEmail: 'oncall' })).toThrow(/alarmEmail/);
  });

  it("is exported with the worker functions' names for the API stack, which deploys after the workers stack", () => {
    const names = workersExportNames(synthesized.workers.stackName);
    const exported = Object.values(
      synthesized.templates.workers.findOutputs('*') as Record<string, { Export?: { Name: string }; Value: unknown }>,
    );

    expect(exported).toContainEqual(
      expect.objectContaining({ Value: { Ref: topicId(synthesized) }, Export: { Name: names.alarmTopicArn } }),
    );
    for (const definition of FUNCTIONS.filter((candidate) => candidate.kind !== 'api')) {
      const [functionId] = functionResource(synthesized.templates.workers, definition);
      expect(exported, definition.name).toContainEqual(
        expect.objectContaining({ Value: { Ref: functionId }, Export: { Name: names.functionName(definition.name) } }),
      );
    }
    expect(synthesized.api.dependencies).toContain(synthesized.workers);
    expect(synthesized.workers.dependencies).not.toContain(synthesized.api);
  });
});

/**
 * The dashboard body as JSON: CDK renders it as a string joined around tokens (references and
 * imports), each replaced here by a readable placeholder that keeps the JSON valid.
 */
function dashboardBody(app: SynthesizedApp): { widgets: Record<string, any>[] } {
  const dashboards = Object.values(app.templates.api.findResources('AWS::CloudWatch::Dashboard') as Record<string, CfnResource>);
  expect(dashboards).toHaveLength(1);
  const [, parts] = dashboards[0]!.Properties?.DashboardBody['Fn::Join'] as [string, unknown[]];
  const placeholder = (token: unknown): string => {
    const cfn = token as Record<string, unknown>;
    if (typeof cfn.Ref === 'string') return `<ref:${cfn.Ref}>`;
    const imports = [...JSON.stringify(token).matchAll(/"Fn::ImportValue":"([^"]+)"/g)].map((match) => match[1]);
    return imports.length > 0 ? `<import:${imports.join(',')}>` : '<token>';
  };
  return JSON.parse(parts.map((part) => (typeof part === 'string' ? part : placeholder(part))).join('')) as {
    widgets: Record<string, any>[];
  };
}

describe('the dashboard: the API, the workers, the queues and the table side by side', () => {
  const SECTIONS = ['API', 'Workers', 'Queues', 'Table'];
  const widgetsUnder = (title: string) => {
    const { widgets } = dashboardBody(synthesized);
    const header = widgets.find((widget) => widget.type === 'text' && widget.properties.markdown === `## ${title}`)!;
    return widgets.filter((widget) => widget.type === 'metric' && widget.x === header.x && widget.y > header.y);
  };
  const metricsUnder = (title: string) => JSON.stringify(widgetsUnder(title).map((widget) => widget.properties.metrics));

  it('is one dashboard in the API stack, named after the stage', () => {
    synthesized.templates.api.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'ReviewBoard-dev' });
    synthesized.templates.workers.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    synthesized.templates.data.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
  });

  it("heads four columns, side by side at the top, with the sections' names", () => {
    const headers = dashboardBody(synthesized).widgets.filter((widget) => widget.type === 'text');

    expect(headers.map((widget) => widget.properties.markdown)).toEqual(SECTIONS.map((title) => `## ${title}`));
    expect(headers.map((widget) => [widget.x, widget.y, widget.width])).toEqual([
      [0, 0, 6],
      [6, 0, 6],
      [12, 0, 6],
      [18, 0, 6],
    ]);
    for (const title of SECTIONS) expect(widgetsUnder(title).length, title).toBeGreaterThanOrEqual(4);
  });

  it('shows the HTTP API and every api function under API', () => {
    const apiId = findByLogicalIdPrefix(synthesized.templates.api, 'AWS::ApiGatewayV2::Api', 'HttpApi')[0];
    const metrics = metricsUnder('API');

    for (const metricName of ['Count', '4xx', '5xx', 'Latency'])
      expect(metrics).toContain(`"AWS/ApiGateway","${metricName}","ApiId","<ref:${apiId}>"`);
    for (const definition of FUNCTIONS.filter((candidate) => candidate.kind === 'api')) {
      expect(metrics, definition.name).toContain(`"FunctionName","<ref:${functionResource(synthesized.templates.api, definition)[0]}>"`);
    }
  });

  it('shows every worker function (imported from the workers stack) and the conversion outcomes under Workers', () => {
    const names = workersExportNames(synthesized.workers.stackName);
    const metrics = metricsUnder('Workers');

    for (const definition of FUNCTIONS.filter((candidate) => candidate.kind !== 'api')) {
      expect(metrics, definition.name).toContain(`"FunctionName","<import:${names.functionName(definition.name)}>"`);
    }
    for (const metricName of ['ConversionFailed', 'ConversionSucceeded'])
      expect(metrics).toContain(`"ReviewBoardService","${metricName}","service","conversion"`);
    expect(JSON.stringify(dashboardBody(configured).widgets)).toContain(`"${NAMESPACE}","ConversionFailed"`);
  });

  it('shows every work queue and dead-letter queue under Queues', () => {
    const names = dataExportNames(synthesized.data.stackName);
    const metrics = metricsUnder('Queues');

    for (const name of QUEUE_NAMES) {
      expect(metrics, name).toContain(`"ApproximateAgeOfOldestMessage","QueueName","<import:${names.queueArn(name)}>"`);
      expect(metrics, name).toContain(`"ApproximateNumberOfMessagesVisible","QueueName","<import:${names.deadLetterQueueArn(name)}>"`);
    }
  });

  it("shows the table's capacity, throttled requests and system errors under Table", () => {
    const tableName = `<import:${dataExportNames(synthesized.data.stackName).tableName}>`;
    const metrics = metricsUnder('Table');

    for (const metricName of ['ConsumedReadCapacityUnits', 'ConsumedWriteCapacityUnits'])
      expect(metrics).toContain(`"AWS/DynamoDB","${metricName}","TableName","${tableName}"`);
    for (const metricName of ['ThrottledRequests', 'SystemErrors'])
      expect(metrics).toContain(`"AWS/DynamoDB","${metricName}","Operation","GetItem","TableName","${tableName}"`);
  });
});
