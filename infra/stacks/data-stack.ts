import { CfnOutput, Duration, Fn, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { UPLOAD_PREFIX } from '../../shared/db/uploads.js';
import { UPLOAD_BUCKET_CORS } from '../../shared/storage/bucket-cors.js';
import { UPLOAD_STATE_TAG } from '../../shared/storage/objects.js';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, EventType, HttpMethods, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { SqsDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { TABLE } from '../../shared/db/core/table.js';
import { WORD_SLOTS } from '../../shared/db/markup-words.js';
import { deadLetterHoldOf, QUEUES, type QueueDefinition, type QueueName } from '../../shared/queues.js';
import type { ServiceResources } from '../constructs/service-function.js';

/** Days after which S3 removes an upload that was never confirmed (its record lives 1 day). */
export const UNCONFIRMED_UPLOAD_EXPIRY_DAYS = 2;

export interface DataStackProps extends StackProps {
  /** Origins allowed to post upload forms to the bucket. @default ['*'] */
  readonly corsOrigins?: string[];
  /** How many of the word index's GSIs (GSI6 onwards) to declare: one more per deployment on an existing table. @default WORD_SLOTS */
  readonly wordIndexes?: number;
}

/** A work queue and the dead-letter queue behind it (and, when that has a consumer, the hold queue behind that). */
export interface WorkQueue {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly deadLetterHold?: Queue;
}

/**
 * Names of the data stack's CloudFormation exports: the whole contract between the stateful stack
 * and the stateless ones. Named exports (rather than automatic cross-stack references) keep the
 * consumers' templates and IAM policies readable and stable, so cdk-nag acknowledgements can name
 * the exact resource they are about.
 */
export function dataExportNames(dataStackName: string) {
  return {
    tableName: `${dataStackName}:TableName`,
    tableStreamArn: `${dataStackName}:TableStreamArn`,
    bucketName: `${dataStackName}:UploadBucketName`,
    queueArn: (name: QueueName) => `${dataStackName}:${QUEUES[name].id}QueueArn`,
    queueUrl: (name: QueueName) => `${dataStackName}:${QUEUES[name].id}QueueUrl`,
    deadLetterQueueArn: (name: QueueName) => `${dataStackName}:${QUEUES[name].id}DeadLetterQueueArn`,
    deadLetterQueueUrl: (name: QueueName) => `${dataStackName}:${QUEUES[name].id}DeadLetterQueueUrl`,
    deadLetterHoldArn: (name: QueueName) => `${dataStackName}:${QUEUES[name].id}DeadLetterHoldQueueArn`,
    deadLetterHoldUrl: (name: QueueName) => `${dataStackName}:${QUEUES[name].id}DeadLetterHoldQueueUrl`,
  };
}

const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];
const HELD_QUEUE_NAMES = QUEUE_NAMES.filter((name) => deadLetterHoldOf(name) !== undefined);

/**
 * The stateful half of the service: the single table, the upload bucket (with its access-log
 * bucket) and the work queues with their dead-letter queues. Table and buckets are retained when
 * the stack goes away; everything stateless lives in the worker and API stacks, which import what
 * they need through `importResources`.
 */
export class DataStack extends Stack {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly accessLogsBucket: Bucket;
  readonly workQueues: Readonly<Record<QueueName, WorkQueue>>;

  constructor(scope: Construct, id: string, props: DataStackProps = {}) {
    super(scope, id, props);

    this.table = this.createTable(props.wordIndexes ?? WORD_SLOTS);
    this.accessLogsBucket = this.createAccessLogsBucket();
    this.bucket = this.createUploadBucket(this.accessLogsBucket, props.corsOrigins ?? ['*']);
    this.workQueues = mapQueues((name) => this.createWorkQueue(name));
    this.notifyUploadsQueue();
    this.exportResources();
  }

  /**
   * The table, bucket and queues as seen from another stack (in the same account and region),
   * imported by export name. The importing stack is made to deploy after this one.
   */
  importResources(scope: Construct): ServiceResources {
    const consumer = Stack.of(scope);
    if (consumer === this) throw new Error('importResources is for the stateless stacks; use the constructs directly here.');
    consumer.addStackDependency(this, 'imports the table, bucket and queues');
    const names = dataExportNames(this.stackName);
    const queue = (name: QueueName) =>
      Queue.fromQueueAttributes(scope, `${QUEUES[name].id}QueueRef`, {
        queueArn: Fn.importValue(names.queueArn(name)),
        queueUrl: Fn.importValue(names.queueUrl(name)),
      });
    const deadLetterQueue = (name: QueueName) =>
      Queue.fromQueueAttributes(scope, `${QUEUES[name].id}DeadLetterQueueRef`, {
        queueArn: Fn.importValue(names.deadLetterQueueArn(name)),
        queueUrl: Fn.importValue(names.deadLetterQueueUrl(name)),
      });
    return {
      table: Table.fromTableAttributes(scope, 'TableRef', {
        tableName: Fn.importValue(names.tableName),
        tableStreamArn: Fn.importValue(names.tableStreamArn),
        globalIndexes: TABLE.indexes.map((index) => index.name),
      }),
      bucket: Bucket.fromBucketName(scope, 'UploadBucketRef', Fn.importValue(names.bucketName)),
      queues: mapQueues(queue),
      deadLetterQueues: mapQueues(deadLetterQueue),
      deadLetterHolds: Object.fromEntries(
        HELD_QUEUE_NAMES.map((name) => [
          name,
          Queue.fromQueueAttributes(scope, `${QUEUES[name].id}DeadLetterHoldQueueRef`, {
            queueArn: Fn.importValue(names.deadLetterHoldArn(name)),
            queueUrl: Fn.importValue(names.deadLetterHoldUrl(name)),
          }),
        ]),
      ),
    };
  }

  private exportResources(): void {
    const names = dataExportNames(this.stackName);
    new CfnOutput(this, 'TableNameOutput', { value: this.table.tableName, exportName: names.tableName });
    new CfnOutput(this, 'TableStreamArnOutput', { value: this.table.tableStreamArn!, exportName: names.tableStreamArn });
    new CfnOutput(this, 'UploadBucketNameOutput', { value: this.bucket.bucketName, exportName: names.bucketName });
    for (const name of QUEUE_NAMES) {
      const { queue, deadLetterQueue } = this.workQueues[name];
      new CfnOutput(this, `${QUEUES[name].id}QueueArnOutput`, { value: queue.queueArn, exportName: names.queueArn(name) });
      new CfnOutput(this, `${QUEUES[name].id}QueueUrlOutput`, { value: queue.queueUrl, exportName: names.queueUrl(name) });
      new CfnOutput(this, `${QUEUES[name].id}DeadLetterQueueArnOutput`, {
        value: deadLetterQueue.queueArn,
        exportName: names.deadLetterQueueArn(name),
      });
      new CfnOutput(this, `${QUEUES[name].id}DeadLetterQueueUrlOutput`, {
        value: deadLetterQueue.queueUrl,
        exportName: names.deadLetterQueueUrl(name),
      });
    }
    for (const name of HELD_QUEUE_NAMES) {
      const hold = this.workQueues[name].deadLetterHold!;
      new CfnOutput(this, `${QUEUES[name].id}DeadLetterHoldQueueArnOutput`, {
        value: hold.queueArn,
        exportName: names.deadLetterHoldArn(name),
      });
      new CfnOutput(this, `${QUEUES[name].id}DeadLetterHoldQueueUrlOutput`, {
        value: hold.queueUrl,
        exportName: names.deadLetterHoldUrl(name),
      });
    }
  }

  private createTable(wordIndexes: number): Table {
    const table = new Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      encryption: TableEncryption.AWS_MANAGED,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      // The webhook fan-out reads new outbox items from the stream; the new image is all it needs.
      stream: StreamViewType.NEW_IMAGE,
    });
    // The word index's GSIs come last in TABLE; a table being upgraded has the first `wordIndexes` of them.
    for (const index of TABLE.indexes.slice(0, TABLE.indexes.length - WORD_SLOTS + wordIndexes)) {
      table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: index.projection === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL,
      });
    }
    return table;
  }

  private createAccessLogsBucket(): Bucket {
    const bucket = new Bucket(this, 'AccessLogsBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'ExpireAccessLogs', expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This bucket is the server access log target of the upload bucket; logging its own accesses would log the log deliveries.',
    });
    return bucket;
  }

  private createUploadBucket(accessLogsBucket: Bucket, corsOrigins: string[]): Bucket {
    return new Bucket(this, 'UploadBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: false,
      serverAccessLogsBucket: accessLogsBucket,
      serverAccessLogsPrefix: 'upload-bucket/',
      // Browsers post presigned upload forms straight to the bucket and read converted files back.
      cors: [
        {
          allowedMethods: UPLOAD_BUCKET_CORS.allowedMethods.map((method) => HttpMethods[method]),
          allowedOrigins: corsOrigins,
          allowedHeaders: UPLOAD_BUCKET_CORS.allowedHeaders,
          exposedHeaders: UPLOAD_BUCKET_CORS.exposedHeaders,
          maxAge: UPLOAD_BUCKET_CORS.maxAgeSeconds,
        },
      ],
      lifecycleRules: [
        { id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
        // Presigned POSTs tag their object unconfirmed and upload-complete retags it; a file never
        // confirmed goes after 2 days, a day after its upload record expired.
        {
          id: 'ExpireUnconfirmedUploads',
          prefix: UPLOAD_PREFIX,
          tagFilters: { [UPLOAD_STATE_TAG]: 'unconfirmed' },
          expiration: Duration.days(UNCONFIRMED_UPLOAD_EXPIRY_DAYS),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /**
   * S3 sends the ObjectCreated notifications of the upload prefix to the uploads queue, which feeds
   * upload-confirmed (the workers stack): S3 retries a delivery to a queue, and a notification the
   * function keeps failing on waits in the dead-letter queue for a redrive. Bucket and queue live
   * here, so the queue policy that lets S3 (from this bucket only) send is written here too.
   */
  private notifyUploadsQueue(): void {
    this.bucket.addEventNotification(EventType.OBJECT_CREATED, new SqsDestination(this.workQueues.uploads.queue), {
      prefix: UPLOAD_PREFIX,
    });
    // The handler CDK provides for Custom::S3BucketNotifications; it exists once notifications do.
    const handler = this.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
    if (handler) {
      Validations.of(handler).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          'CDK-provided, deploy-time handler of Custom::S3BucketNotifications; the managed policy only lets it write its own logs. Its S3 rights are scoped to the upload bucket by CDK.',
      });
    }
  }

  /**
   * The queue, its dead-letter queue and, for a dead-letter queue with a consumer, the hold queue
   * behind it: the consumer hands on what it handled, so `admin queue redrive` finds it there, and
   * being the dead-letter queue's own dead-letter queue makes it a valid source of a message move task.
   */
  private createWorkQueue(name: QueueName): WorkQueue {
    const definition = QUEUES[name];
    const deadLetterVisibility = (definition as QueueDefinition).deadLetterVisibilityTimeoutSeconds;
    const holdSettings = deadLetterHoldOf(name);
    const deadLetterHold = holdSettings
      ? new Queue(this, `${definition.id}DeadLetterHoldQueue`, {
          retentionPeriod: Duration.days(definition.deadLetterRetentionDays),
          encryption: QueueEncryption.SQS_MANAGED,
          enforceSSL: true,
        })
      : undefined;
    const deadLetterQueue = new Queue(this, `${definition.id}DeadLetterQueue`, {
      retentionPeriod: Duration.days(definition.deadLetterRetentionDays),
      ...(deadLetterVisibility === undefined ? {} : { visibilityTimeout: Duration.seconds(deadLetterVisibility) }),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      ...(deadLetterHold && holdSettings
        ? { deadLetterQueue: { queue: deadLetterHold, maxReceiveCount: holdSettings.maxReceiveCount } }
        : {}),
    });
    const queue = new Queue(this, `${definition.id}Queue`, {
      visibilityTimeout: Duration.seconds(definition.visibilityTimeoutSeconds),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: definition.maxReceiveCount },
    });
    return { queue, deadLetterQueue, ...(deadLetterHold ? { deadLetterHold } : {}) };
  }
}

/** One value per queue of `QUEUES`, so a new queue is provisioned and imported without a hand-kept list. */
function mapQueues<T>(make: (name: QueueName) => T): Record<QueueName, T> {
  return Object.fromEntries((Object.keys(QUEUES) as QueueName[]).map((name) => [name, make(name)])) as Record<QueueName, T>;
}
