import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * The service's CloudWatch metrics, written as Embedded Metric Format lines by Powertools for AWS
 * Lambda's Metrics: CloudWatch turns each line into data points, with no API call and no added
 * latency. Namespace: POWERTOOLS_METRICS_NAMESPACE (CDK context `metricsNamespace`, default
 * `ReviewBoardService`); every point has the dimension `service` (POWERTOOLS_SERVICE_NAME: the
 * function's name). POWERTOOLS_METRICS_DISABLED=true switches them off (the local stack does, so
 * its output stays readable).
 *
 * Each `recordMetrics` call is written at once, as one line: the calls that make up a record are
 * synchronous, so requests running side by side in one process (the local stack) never mix their
 * dimensions, and no invocation has to remember to flush.
 */
export const METRICS_NAMESPACE = 'ReviewBoardService';

/** Every metric the service writes, with its unit: the alarms and the dashboard name them from here. */
export const METRIC_UNITS = {
  Requests: MetricUnit.Count,
  Latency: MetricUnit.Milliseconds,
  ClientErrors: MetricUnit.Count,
  ServerErrors: MetricUnit.Count,
  MarkupsCreated: MetricUnit.Count,
  BytesConfirmed: MetricUnit.Bytes,
  ConversionSucceeded: MetricUnit.Count,
  ConversionFailed: MetricUnit.Count,
  ConversionDuration: MetricUnit.Milliseconds,
  WebhookDeliverySucceeded: MetricUnit.Count,
  WebhookDeliveryFailed: MetricUnit.Count,
  WebhookDeliveryRetried: MetricUnit.Count,
  WebhookEventToDelivery: MetricUnit.Milliseconds,
  ExchangeTokensMinted: MetricUnit.Count,
} as const;

export type MetricName = keyof typeof METRIC_UNITS;

let metrics: Metrics | undefined;
let off: boolean | undefined;

/** Switched off by environment (the local stack): then no metric is even assembled. */
const disabled = () => (off ??= process.env.POWERTOOLS_METRICS_DISABLED === 'true');

function instance(): Metrics {
  metrics ??= new Metrics({
    namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME || 'review-board-service',
  });
  return metrics;
}

/**
 * Writes these values as one EMF line, with `dimensions` beside `service`. A metric that should
 * also be seen without a dimension (conversions by type and in all) is recorded twice by the caller.
 */
export function recordMetrics(values: Partial<Record<MetricName, number>>, dimensions: Record<string, string> = {}): void {
  if (disabled()) return;
  const entries = Object.entries(values).filter(([, value]) => value !== undefined && Number.isFinite(value));
  if (entries.length === 0) return;
  const target = instance();
  for (const [name, value] of Object.entries(dimensions)) target.addDimension(name, value);
  for (const [name, value] of entries) target.addMetric(name, METRIC_UNITS[name as MetricName], value!);
  target.publishStoredMetrics();
}

/** Forgets the metrics writer, so the next line reads the environment again (tests). */
export function resetMetrics(): void {
  metrics = undefined;
  off = undefined;
}
