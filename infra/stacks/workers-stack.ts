import { Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { EventType } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import type { Construct } from 'constructs';
import { FUNCTIONS, type FunctionDefinition } from '../../functions/registry.js';
import { UPLOAD_PREFIX } from '../../shared/db/uploads.js';
import { maxConcurrencyOf, QUEUES } from '../../shared/queues.js';
import { ServiceFunction, type ServiceResources } from '../constructs/service-function.js';
import type { DataStack } from './data-stack.js';

export interface WorkersStackProps extends StackProps {
  /** Where the table, bucket and queues live; they are imported by export name. */
  readonly data: DataStack;
  /** @default the registry's `s3` and `sqs` functions */
  readonly functions?: readonly FunctionDefinition[];
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  readonly appUrl?: string;
  readonly tracing?: boolean;
}

/**
 * The event-driven functions: upload confirmation on S3 ObjectCreated under the upload prefix, and
 * one worker per work queue, fed by an SQS event source that reports partial batch failures so one
 * bad record is retried (and dead-lettered) alone; a `deadLetters` worker is fed by the queue's
 * dead-letter queue instead.
 */
export class WorkersStack extends Stack {
  readonly functions: Readonly<Record<string, ServiceFunction>>;

  constructor(scope: Construct, id: string, props: WorkersStackProps) {
    super(scope, id, props);
    const definitions = props.functions ?? FUNCTIONS.filter((definition) => definition.kind !== 'api');
    const resources = props.data.importResources(this);
    const functions: Record<string, ServiceFunction> = {};

    const uploadFunctions = definitions.filter((definition) => definition.kind === 's3');
    if (uploadFunctions.length > 1) {
      throw new Error(`S3 allows one ObjectCreated notification per prefix; got ${uploadFunctions.length} upload functions.`);
    }

    for (const definition of definitions) {
      if (definition.kind === 'api') continue;
      const fn = ServiceFunction.forDefinition(this, definition, resources, {
        logLevel: props.logLevel,
        appUrl: props.appUrl,
        tracing: props.tracing,
      });
      functions[definition.name] = fn;

      if (definition.kind === 'sqs') {
        const source = definition.deadLetters ? resources.deadLetterQueues[definition.queue] : resources.queues[definition.queue];
        fn.addEventSource(
          new SqsEventSource(source, {
            batchSize: QUEUES[definition.queue].batchSize,
            reportBatchItemFailures: true,
            maxConcurrency: maxConcurrencyOf(definition.queue),
          }),
        );
      } else {
        this.notifyOnUpload(resources, fn);
      }
    }
    this.functions = functions;
  }

  /**
   * Subscribes the function to ObjectCreated under the upload prefix. The bucket is imported, so the
   * notification resource and the function's invoke permission live in this stack and the data
   * stack never depends on it.
   */
  private notifyOnUpload(resources: ServiceResources, fn: ServiceFunction): void {
    resources.bucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(fn), { prefix: UPLOAD_PREFIX });

    // The handler CDK provides for Custom::S3BucketNotifications; it exists once notifications do.
    const handler = this.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
    if (handler) {
      Validations.of(handler).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: 'CDK-provided, deploy-time handler of Custom::S3BucketNotifications; the managed policy only lets it write its own logs. Its S3 rights are scoped to the upload bucket by CDK.',
      });
    }
  }
}
