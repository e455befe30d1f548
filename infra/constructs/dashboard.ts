import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Column,
  Dashboard,
  GraphWidget,
  Row,
  TextWidget,
  type IMetric,
  type IWidget,
  type MetricOptions,
} from 'aws-cdk-lib/aws-cloudwatch';
import { Operation, type ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueName } from '../../shared/queues.js';
import {
  ALARM_RULES,
  apiServerErrorRate,
  CONVERSION_METRICS,
  conversionFailureRate,
  conversionOutcome,
  tableSystemErrors,
  tableThrottledRequests,
} from './monitoring.js';

/** Width of one section's column: four sections side by side fill the dashboard's 24 units. */
const COLUMN_WIDTH = 6;
const GRAPH_HEIGHT = 6;

export interface ServiceDashboardProps {
  readonly dashboardName: string;
  readonly httpApi: IHttpApi;
  /** Keyed by registry name. */
  readonly apiFunctions: Readonly<Record<string, IFunction>>;
  /** Keyed by registry name. */
  readonly workerFunctions: Readonly<Record<string, IFunction>>;
  readonly queues: Readonly<Record<QueueName, IQueue>>;
  readonly deadLetterQueues: Readonly<Record<QueueName, IQueue>>;
  readonly table: ITable;
  /** Namespace of the service's own metrics (context `metricsNamespace`). */
  readonly metricsNamespace: string;
}

/**
 * The service's one dashboard: four columns side by side, the API, the workers, the queues and the
 * table, each headed by its name; graphs an alarm watches carry its threshold as a line.
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    this.dashboard = new Dashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new Row(
            section('API', apiGraphs(props)),
            section('Workers', workerGraphs(props)),
            section('Queues', queueGraphs(props)),
            section('Table', tableGraphs(props.table)),
          ),
        ],
      ],
    });
  }
}

function section(title: string, graphs: IWidget[]): Column {
  return new Column(new TextWidget({ markdown: `## ${title}`, width: COLUMN_WIDTH, height: 1 }), ...graphs);
}

/** A graph of one column's width; `thresholds` draws, by label, the thresholds of the alarms that watch it. */
function graph(title: string, left: IMetric[], options: { thresholds?: Record<string, number>; right?: IMetric[] } = {}): GraphWidget {
  return new GraphWidget({
    title,
    left,
    right: options.right,
    width: COLUMN_WIDTH,
    height: GRAPH_HEIGHT,
    leftAnnotations: Object.entries(options.thresholds ?? {}).map(([label, value]) => ({ label, value })),
  });
}

/** One line per function, labelled with its registry name. */
function perFunction(
  functions: Readonly<Record<string, IFunction>>,
  metricOf: (fn: IFunction, options: MetricOptions) => IMetric,
  statistic = 'Sum',
): IMetric[] {
  return Object.entries(functions).map(([name, fn]) => metricOf(fn, { label: name, statistic }));
}

function apiGraphs({ httpApi, apiFunctions }: ServiceDashboardProps): IWidget[] {
  return [
    graph('Requests, 4xx, 5xx', [
      httpApi.metricCount({ label: 'requests', statistic: 'Sum' }),
      httpApi.metricClientError({ label: '4xx', statistic: 'Sum' }),
      httpApi.metricServerError({ label: '5xx', statistic: 'Sum' }),
    ]),
    graph('5xx rate (%)', [apiServerErrorRate(httpApi)], { thresholds: { alarm: ALARM_RULES.api5xxRate.threshold } }),
    graph(
      'Latency (ms)',
      [httpApi.metricLatency({ label: 'p50', statistic: 'p50' }), httpApi.metricLatency({ label: 'p99', statistic: 'p99' })],
      { thresholds: { alarm: ALARM_RULES.apiLatencyP99.threshold } },
    ),
    graph(
      'Function errors',
      perFunction(apiFunctions, (fn, options) => fn.metricErrors(options)),
    ),
    graph(
      'Function throttles',
      perFunction(apiFunctions, (fn, options) => fn.metricThrottles(options)),
    ),
    graph(
      'Function duration p99 (ms)',
      perFunction(apiFunctions, (fn, options) => fn.metricDuration(options), 'p99'),
    ),
  ];
}

function workerGraphs({ workerFunctions, metricsNamespace }: ServiceDashboardProps): IWidget[] {
  const outcomes = [CONVERSION_METRICS.succeeded, CONVERSION_METRICS.failed].map((name) =>
    conversionOutcome(metricsNamespace, name).with({ label: name }),
  );
  return [
    graph(
      'Invocations',
      perFunction(workerFunctions, (fn, options) => fn.metricInvocations(options)),
    ),
    graph(
      'Errors',
      perFunction(workerFunctions, (fn, options) => fn.metricErrors(options)),
    ),
    graph(
      'Throttles',
      perFunction(workerFunctions, (fn, options) => fn.metricThrottles(options)),
    ),
    graph(
      'Duration p99 (ms)',
      perFunction(workerFunctions, (fn, options) => fn.metricDuration(options), 'p99'),
    ),
    graph('Conversions: failure rate (%), outcomes', [conversionFailureRate(metricsNamespace)], {
      thresholds: { alarm: ALARM_RULES.conversionFailureRate.threshold },
      right: outcomes,
    }),
  ];
}

function queueGraphs({ queues, deadLetterQueues }: ServiceDashboardProps): IWidget[] {
  const names = Object.keys(queues) as QueueName[];
  const ageAlarms = Object.fromEntries(
    Object.entries(ALARM_RULES.oldestMessageAge).map(([name, rule]) => [`${name} alarm`, rule.threshold]),
  );
  return [
    graph(
      'Messages waiting',
      names.map((name) => queues[name].metricApproximateNumberOfMessagesVisible({ label: name, statistic: 'Maximum' })),
    ),
    graph(
      'Messages in flight',
      names.map((name) => queues[name].metricApproximateNumberOfMessagesNotVisible({ label: name, statistic: 'Maximum' })),
    ),
    graph(
      'Oldest message age (s)',
      names.map((name) => queues[name].metricApproximateAgeOfOldestMessage({ label: name, statistic: 'Maximum' })),
      { thresholds: ageAlarms },
    ),
    graph(
      'Dead letters',
      names.map((name) => deadLetterQueues[name].metricApproximateNumberOfMessagesVisible({ label: name, statistic: 'Maximum' })),
    ),
  ];
}

function tableGraphs(table: ITable): IWidget[] {
  return [
    graph('Consumed capacity units', [
      table.metricConsumedReadCapacityUnits({ label: 'read', statistic: 'Sum' }),
      table.metricConsumedWriteCapacityUnits({ label: 'write', statistic: 'Sum' }),
    ]),
    graph('Throttled requests', [tableThrottledRequests(table)], { thresholds: { alarm: ALARM_RULES.tableThrottledRequests.threshold } }),
    graph('System errors', [tableSystemErrors(table)], { thresholds: { alarm: ALARM_RULES.tableSystemErrors.threshold } }),
    graph(
      'Request latency p99 (ms)',
      [Operation.GET_ITEM, Operation.QUERY, Operation.PUT_ITEM, Operation.UPDATE_ITEM].map((operation) =>
        table.metricSuccessfulRequestLatency({
          label: operation,
          statistic: 'p99',
          dimensionsMap: { TableName: table.tableName, Operation: operation },
        }),
      ),
    ),
  ];
}
