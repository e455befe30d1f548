import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type ApiFunction, type FunctionDefinition, type QueueWorkerFunction } from '../../functions/registry.js';
import { ENV, MAX_EXCHANGE_TOKEN_TTL_SECONDS, parseConfig } from '../../shared/config.js';
import { TABLE } from '../../shared/db/core/table.js';
import { WORD_SLOTS } from '../../shared/db/markup-words.js';
import { deadLetterHoldOf, QUEUES, type QueueDefinition, type QueueName } from '../../shared/queues.js';
import { CONVERTER_PACKAGES, convertersLayer, FFMPEG_LAYER_PATH } from '../../infra/constructs/converters-layer.js';
import { functionIdOf, REPO_ROOT } from '../../infra/constructs/service-function.js';
import { ffmpegBuildId } from '../../infra/tools/ffmpeg.js';
import { ffmpegBuilt, FFMPEG_WAIT_MS } from '../support/ffmpeg.js';
import { dataExportNames } from '../../infra/stacks/data-stack.js';
import {
  actionsOf,
  allowedActions,
  findByLogicalIdPrefix,
  functionResource,
  resourcesOf,
  rolePolicyStatements,
  synthesizeApp,
  templateOf,
  type CfnResource,
  type SynthesizedApp,
  variablesOf,
} from './synth-app.js';

const SYNTH_TIMEOUT_MS = 120_000;

const definitionNamed = (name: string): FunctionDefinition => {
  const definition = FUNCTIONS.find((candidate) => candidate.name === name);
  if (!definition) throw new Error(`No function named ${name} in the registry.`);
  return definition;
};
const apiFunctions = FUNCTIONS.filter((definition): definition is ApiFunction => definition.kind === 'api');
const queueWorkers = FUNCTIONS.filter((definition): definition is QueueWorkerFunction => definition.kind === 'sqs');
const allRoutes = apiFunctions.flatMap((definition) => definition.routes.map((route) => ({ definition, route })));

let synthesized: SynthesizedApp;
let names: ReturnType<typeof dataExportNames>;

beforeAll(() => {
  synthesized = synthesizeApp();
  names = dataExportNames(synthesized.data.stackName);
}, SYNTH_TIMEOUT_MS);

/** How the stateless stacks address the table: an ARN built around the imported table name. */
const tableArn = () => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':dynamodb:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':table/',
      { 'Fn::ImportValue': names.tableName },
    ],
  ],
});
const tableIndexesArn = () => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':dynamodb:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      ':table/',
      { 'Fn::ImportValue': names.tableName },
      '/index/*',
    ],
  ],
});
const bucketObjectsArn = () => ({
  'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::', { 'Fn::ImportValue': names.bucketName }, '/*']],
});

const queueResource = (name: QueueName) => findByLogicalIdPrefix(synthesized.templates.data, 'AWS::SQS::Queue', `${QUEUES[name].id}Queue`);
const deadLetterQueueResource = (name: QueueName) =>
  findByLogicalIdPrefix(synthesized.templates.data, 'AWS::SQS::Queue', `${QUEUES[name].id}DeadLetterQueue`);
const deadLetterHoldResource = (name: QueueName) =>
  findByLogicalIdPrefix(synthesized.templates.data, 'AWS::SQS::Queue', `${QUEUES[name].id}DeadLetterHoldQueue`);
/** The queues whose dead-letter queue has a consumer, and so a hold queue behind it. */
const heldQueues = (Object.keys(QUEUES) as QueueName[]).filter((name) => deadLetterHoldOf(name) !== undefined);

describe("the tests' own synths", () => {
  it('copy no asset into their cloud assembly, and write it to a folder of their own that the file removes', () => {
    // Left to CDK, each synth copied every asset (the converters layer alone is 67 MB) into a new
    // cdk.out* folder that nothing removed, and CI ran out of disk.
    const outdir = synthesized.app.outdir;
    expect(outdir.startsWith(join(tmpdir(), 'review-board-synth-'))).toBe(true);
    expect(readdirSync(outdir).filter((name) => name.startsWith('asset.'))).toEqual([]);
  });
});

describe('data stack: one table, one upload bucket, work queues with dead letters (DESIGN: Shape)', () => {
  it('keys the table on string PK/SK', () => {
    synthesized.templates.data.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      AttributeDefinitions: Match.arrayWith([
        { AttributeName: TABLE.partitionKey, AttributeType: 'S' },
        { AttributeName: TABLE.sortKey, AttributeType: 'S' },
      ]),
    });
  });

  it('declares every index of TABLE with string keys: GSI1 to GSI5 projecting ALL, the word index (GSI6 to GSI15) keys only', () => {
    synthesized.templates.data.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: TABLE.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
      AttributeDefinitions: Match.arrayWith(
        [...new Set(TABLE.indexes.flatMap((index) => [index.partitionKey, index.sortKey]))].map((name) => ({
          AttributeName: name,
          AttributeType: 'S',
        })),
      ),
    });
  });

  it('upgrades an existing table one word index per deployment: -c wordIndexes=n declares GSI6 to GSI(5+n)', () => {
    const indexesWith = (wordIndexes: number) => {
      const template = synthesizeApp({ wordIndexes }).templates.data;
      const table = Object.values(template.findResources('AWS::DynamoDB::Table'))[0]!;
      return table.Properties!.GlobalSecondaryIndexes.map((index: { IndexName: string }) => index.IndexName);
    };
    expect(indexesWith(0)).toEqual(['GSI1', 'GSI2', 'GSI3', 'GSI4', 'GSI5']);
    expect(indexesWith(1)).toEqual(['GSI1', 'GSI2', 'GSI3', 'GSI4', 'GSI5', 'GSI6']);
    expect(() => synthesizeApp({ wordIndexes: 11 })).toThrow(/wordIndexes/);
  });

  it('serves the thread index (issue 13) from the base table keys: no index beyond GSI1 to GSI5 and the word index, no LSI', () => {
    const tables = Object.values(synthesized.templates.data.findResources('AWS::DynamoDB::Table'));
    expect(tables).toHaveLength(1);
    const properties = tables[0]!.Properties;
    // Partitions `TIX#<markupId>#<kind>#<leaf>` with `<position>` sort keys, read with strongly consistent Queries.
    expect(properties.LocalSecondaryIndexes).toBeUndefined();
    expect(properties.GlobalSecondaryIndexes.map((index: { IndexName: string }) => index.IndexName)).toEqual([
      'GSI1',
      'GSI2',
      'GSI3',
      'GSI4',
      'GSI5',
      ...Array.from({ length: WORD_SLOTS }, (_, i) => `GSI${6 + i}`),
    ]);
    expect(properties.KeySchema).toEqual([
      { AttributeName: 'PK', KeyType: 'HASH' },
      { AttributeName: 'SK', KeyType: 'RANGE' },
    ]);
  });

  it('bills the table per request', () => {
    synthesized.templates.data.hasResourceProperties('AWS::DynamoDB::Table', { BillingMode: 'PAY_PER_REQUEST' });
  });

  it('enables point-in-time recovery on the table', () => {
    synthesized.templates.data.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('expires items through the TTL attribute', () => {
    synthesized.templates.data.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
    });
  });

  it('encrypts the table with the AWS-managed key, protects it from deletion and retains it', () => {
    synthesized.templates.data.hasResource('AWS::DynamoDB::Table', {
      Properties: Match.objectLike({ SSESpecification: { SSEEnabled: true }, DeletionProtectionEnabled: true }),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  it.each(Object.keys(QUEUES) as QueueName[])(
    'redrives the %s queue to its dead-letter queue with the registry maxReceiveCount and visibility timeout',
    (name) => {
      const [deadLetterId] = deadLetterQueueResource(name);
      const [, queue] = queueResource(name);

      expect(queue.Properties).toMatchObject({
        VisibilityTimeout: QUEUES[name].visibilityTimeoutSeconds,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterId, 'Arn'] },
          maxReceiveCount: QUEUES[name].maxReceiveCount,
        },
      });
    },
  );

  it.each(Object.keys(QUEUES) as QueueName[])('keeps dead letters of the %s queue for the registry retention', (name) => {
    const [, deadLetterQueue] = deadLetterQueueResource(name);

    expect(deadLetterQueue.Properties?.MessageRetentionPeriod).toBe(QUEUES[name].deadLetterRetentionDays * 24 * 3600);
  });

  it('encrypts every queue with SQS-managed SSE and denies requests without TLS', () => {
    const queues = synthesized.templates.data.findResources('AWS::SQS::Queue') as Record<string, CfnResource>;

    expect(Object.keys(queues)).toHaveLength(Object.keys(QUEUES).length * 2 + heldQueues.length);
    for (const [id, queue] of Object.entries(queues)) {
      expect(queue.Properties?.SqsManagedSseEnabled).toBe(true);
      synthesized.templates.data.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    }
  });

  it('blocks all public access to the upload bucket and enforces bucket-owner object ownership', () => {
    synthesized.templates.data.hasResourceProperties('AWS::S3::Bucket', {
      LoggingConfiguration: Match.anyValue(),
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
    });
  });

  it('denies requests to the upload bucket that do not use TLS', () => {
    const [bucketId] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'UploadBucket');

    synthesized.templates.data.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 's3:*',
            Principal: { AWS: '*' },
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('lets browsers post upload forms to the bucket through CORS', () => {
    const [, bucket] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'UploadBucket');

    expect(bucket.Properties?.CorsConfiguration).toEqual({
      CorsRules: [
        expect.objectContaining({
          AllowedMethods: expect.arrayContaining(['POST', 'PUT', 'GET', 'HEAD']),
          AllowedOrigins: ['*'],
        }),
      ],
    });
  });

  it('aborts incomplete multipart uploads after one day', () => {
    const [, bucket] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'UploadBucket');

    expect(bucket.Properties?.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
    );
  });

  it('writes the upload bucket access logs to a separate, retained logs bucket', () => {
    const [logsId, logsBucket] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'AccessLogsBucket');
    const [, bucket] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'UploadBucket');

    expect(bucket.Properties?.LoggingConfiguration).toMatchObject({ DestinationBucketName: { Ref: logsId } });
    expect(bucket).toMatchObject({ DeletionPolicy: 'Retain' });
    expect(logsBucket).toMatchObject({ DeletionPolicy: 'Retain' });
  });

  it('exports the table, bucket and queues under stage-qualified names', () => {
    const outputs = synthesized.templates.data.findOutputs('*') as Record<string, { Export?: { Name: string } }>;
    const exported = Object.values(outputs).map((output) => output.Export?.Name);

    expect(exported).toEqual(
      expect.arrayContaining([
        names.tableName,
        names.bucketName,
        ...(Object.keys(QUEUES) as QueueName[]).flatMap((name) => [
          names.queueArn(name),
          names.queueUrl(name),
          names.deadLetterQueueArn(name),
          names.deadLetterQueueUrl(name),
        ]),
        ...heldQueues.flatMap((name) => [names.deadLetterHoldArn(name), names.deadLetterHoldUrl(name)]),
      ]),
    );
  });
});

describe('workers stack: SQS events drive the upload, conversion and webhook workers (S3 notifies the uploads queue)', () => {
  it.each(queueWorkers.map((definition) => [definition.name, definition] as const))(
    'feeds %s from its queue (or its dead-letter queue) in registry-sized batches that report item failures',
    (_name, definition) => {
      const [functionId] = functionResource(synthesized.templates.workers, definition);
      const source = definition.deadLetters ? names.deadLetterQueueArn(definition.queue) : names.queueArn(definition.queue);

      synthesized.templates.workers.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: functionId },
        EventSourceArn: { 'Fn::ImportValue': source },
        BatchSize: QUEUES[definition.queue].batchSize,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    },
  );

  it.each(queueWorkers.map((definition) => [definition.name, definition] as const))(
    'gives %s the timeout its queue visibility was sized for',
    (_name, definition) => {
      const [, fn] = functionResource(synthesized.templates.workers, definition);
      const queue: QueueDefinition = QUEUES[definition.queue];
      const [timeout, visibility] = definition.deadLetters
        ? [definition.timeoutSeconds, deadLetterQueueResource(definition.queue)[1].Properties?.VisibilityTimeout]
        : [queue.workerTimeoutSeconds, queue.visibilityTimeoutSeconds];

      expect(fn.Properties?.Timeout).toBe(timeout);
      expect(visibility).toBeGreaterThanOrEqual(6 * timeout!);
    },
  );

  it('marks the markups of dead conversion jobs failed: a consumer on the conversion dead-letter queue, whose messages stay hidden while it runs', () => {
    const consumer = definitionNamed('conversion-dead-letters') as QueueWorkerFunction;
    const [functionId, fn] = functionResource(synthesized.templates.workers, consumer);

    synthesized.templates.workers.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId },
      EventSourceArn: { 'Fn::ImportValue': names.deadLetterQueueArn('conversion') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(fn.Properties?.Timeout).toBe(consumer.timeoutSeconds);
    expect(deadLetterQueueResource('conversion')[1].Properties?.VisibilityTimeout).toBe(
      QUEUES.conversion.deadLetterVisibilityTimeoutSeconds,
    );
  });

  it('has S3 send ObjectCreated under uploads/ to the uploads queue, which feeds upload-confirmed', () => {
    const [bucketId] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'UploadBucket');
    const [queueId] = queueResource('uploads');

    synthesized.templates.data.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: { Ref: bucketId },
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'uploads/' }] } },
            QueueArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
          },
        ],
      },
    });
    expect(synthesized.templates.workers.findResources('Custom::S3BucketNotifications')).toEqual({});
    expect(definitionNamed('upload-confirmed')).toMatchObject({ kind: 'sqs', queue: 'uploads' });
  });

  it('lets only the upload bucket send to the uploads queue', () => {
    const [bucketId] = findByLogicalIdPrefix(synthesized.templates.data, 'AWS::S3::Bucket', 'UploadBucket');
    const [queueId] = queueResource('uploads');

    synthesized.templates.data.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: queueId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 's3.amazonaws.com' },
            Action: Match.arrayWith(['sqs:SendMessage']),
            Condition: { ArnLike: { 'aws:SourceArn': { 'Fn::GetAtt': [bucketId, 'Arn'] } } },
          }),
        ]),
      },
    });
    const grants = Object.values(synthesized.templates.data.findResources('AWS::SQS::QueuePolicy'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Effect: string; Principal?: unknown }[])
      .filter((statement) => statement.Effect === 'Allow');
    expect(grants.map((statement) => statement.Principal)).toEqual([{ Service: 's3.amazonaws.com' }]);
  });
});

describe('API stack: routes come from the route tables (DESIGN: one route table per group)', () => {
  const integrationOf = (definition: FunctionDefinition): string => {
    const [functionId] = functionResource(synthesized.templates.api, definition);
    const integrations = synthesized.templates.api.findResources('AWS::ApiGatewayV2::Integration', {
      Properties: { IntegrationUri: { 'Fn::GetAtt': [functionId, 'Arn'] } },
    });
    const ids = Object.keys(integrations);
    expect(ids).toHaveLength(1);
    return ids[0]!;
  };

  it.each(allRoutes.map(({ definition, route }) => [`${route.method} ${route.path}`, definition.name, definition] as const))(
    'routes %s to the %s integration',
    (routeKey, _name, definition) => {
      synthesized.templates.api.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: routeKey,
        Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationOf(definition) }]] },
      });
    },
  );

  it('sends $default to the function marked isDefault', () => {
    const fallback = apiFunctions.find((definition) => definition.isDefault)!;

    synthesized.templates.api.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: '$default',
      Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationOf(fallback) }]] },
    });
  });

  it('declares no route beyond the route tables, $default and the preflight route', () => {
    const routeKeys = Object.values(synthesized.templates.api.findResources('AWS::ApiGatewayV2::Route') as Record<string, CfnResource>).map(
      (route) => route.Properties?.RouteKey as string,
    );

    expect(routeKeys.sort()).toEqual(
      [...allRoutes.map(({ route }) => `${route.method} ${route.path}`), '$default', 'OPTIONS /{proxy+}'].sort(),
    );
  });

  it('names path variables alike at each level, as API Gateway requires (it refuses /x/{id} beside /x/{xId}/y with a ConflictException)', () => {
    const variableAt = new Map<string, string>();
    const conflicts: string[] = [];
    for (const { route } of allRoutes) {
      const segments = route.path.split('/');
      segments.forEach((segment, index) => {
        if (!segment.startsWith('{')) return;
        const parent = segments.slice(0, index).join('/');
        const earlier = variableAt.get(parent);
        if (earlier !== undefined && earlier !== segment) conflicts.push(`${route.path}: ${segment} beside ${earlier} under ${parent}`);
        variableAt.set(parent, segment);
      });
    }

    expect(conflicts).toEqual([]);
  });

  it('uses one Lambda integration per api function', () => {
    synthesized.templates.api.resourceCountIs('AWS::ApiGatewayV2::Integration', apiFunctions.length);
  });

  it('passes every OPTIONS request to the function that answers preflights: no static corsPreflight answering * (issue 11 item 6)', () => {
    const preflight = apiFunctions.find((definition) => definition.answersPreflight)!;
    const [api] = Object.values(synthesized.templates.api.findResources('AWS::ApiGatewayV2::Api') as Record<string, CfnResource>);

    expect(api?.Properties?.CorsConfiguration).toBeUndefined();
    synthesized.templates.api.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: 'OPTIONS /{proxy+}',
      Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationOf(preflight) }]] },
    });
  });

  it('logs access to a log group with one-month retention and throttles the $default stage', () => {
    const [logGroupId] = findByLogicalIdPrefix(synthesized.templates.api, 'AWS::Logs::LogGroup', 'AccessLogs');

    synthesized.templates.api.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    synthesized.templates.api.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: {
        DestinationArn: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
        Format: Match.stringLikeRegexp('\\$context\\.requestId'),
      },
      DefaultRouteSettings: { ThrottlingRateLimit: Match.anyValue(), ThrottlingBurstLimit: Match.anyValue() },
    });
  });
});

describe('IAM: each function gets exactly the access its registry entry declares', () => {
  const statementsOf = (name: string) => {
    const definition = definitionNamed(name);
    return rolePolicyStatements(templateOf(synthesized, definition), functionIdOf(definition));
  };

  it('grants workspaces DynamoDB actions on the table and its indexes only, sending to the conversion queue only, and nothing on S3', () => {
    const statements = statementsOf('workspaces');
    const dynamo = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')));

    expect(allowedActions(statements, 'dynamodb')).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:PutItem']));
    for (const statement of dynamo) {
      expect(actionsOf(statement).every((action) => action.startsWith('dynamodb:'))).toBe(true);
      for (const resource of resourcesOf(statement)) expect([tableArn(), tableIndexesArn()]).toContainEqual(resource);
    }
    expect(allowedActions(statements, 's3')).toEqual([]);
    const sqs = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('sqs:')));
    expect(sqs).toHaveLength(1);
    expect(actionsOf(sqs[0]!).every((action) => /^sqs:(SendMessage|GetQueueAttributes|GetQueueUrl)$/.test(action))).toBe(true);
    expect(resourcesOf(sqs[0]!)).toEqual([{ 'Fn::ImportValue': names.queueArn('conversion') }]);
  });

  it('lets webhook-delivery write the table (delivery log, disabling), send to its queue and its dead-letter queue only, and only read S3', () => {
    const statements = statementsOf('webhook-delivery');
    const dynamo = allowedActions(statements, 'dynamodb');

    expect(dynamo).toEqual(expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']));
    // Bodies carry markups with presigned file links: reading, never writing or deleting.
    const s3 = allowedActions(statements, 's3');
    expect(s3).toContain('s3:GetObject*');
    expect(s3.filter((action) => /Put|Delete|Abort|Replicate|Restore/.test(action))).toEqual([]);
    const sqs = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('sqs:')));
    const resources = new Set(sqs.flatMap((statement) => resourcesOf(statement)).map((resource) => JSON.stringify(resource)));
    expect([...resources].sort()).toEqual(
      [{ 'Fn::ImportValue': names.queueArn('webhookDelivery') }, { 'Fn::ImportValue': names.deadLetterQueueArn('webhookDelivery') }]
        .map((arn) => JSON.stringify(arn))
        .sort(),
    );
    // The dead-letter queue: sending only (its event source reads the work queue, never the dead letters).
    const deadLetter = sqs.filter((statement) =>
      JSON.stringify(resourcesOf(statement)).includes(names.deadLetterQueueArn('webhookDelivery')),
    );
    expect(
      deadLetter
        .flatMap((statement) => actionsOf(statement))
        .every((action) => /^sqs:(SendMessage|GetQueueAttributes|GetQueueUrl)$/.test(action)),
    ).toBe(true);
  });

  it('lets item-moves read and write the table and send to the moves queue only (its next batch), with no S3; items may queue a move too', () => {
    const statements = statementsOf('item-moves');
    const dynamo = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('dynamodb:')));

    expect(allowedActions(statements, 'dynamodb')).toEqual(
      expect.arrayContaining(['dynamodb:Query', 'dynamodb:UpdateItem', 'dynamodb:PartiQLUpdate']),
    );
    for (const statement of dynamo)
      for (const resource of resourcesOf(statement)) expect([tableArn(), tableIndexesArn()]).toContainEqual(resource);
    expect(allowedActions(statements, 's3')).toEqual([]);
    const sending = statements.filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
    expect(sending.flatMap((statement) => resourcesOf(statement))).toEqual([{ 'Fn::ImportValue': names.queueArn('moves') }]);
    // Reading its queue is the event source's (ReceiveMessage/DeleteMessage on the moves queue only).
    const receiving = statements.filter((statement) => actionsOf(statement).includes('sqs:ReceiveMessage'));
    expect(receiving.flatMap((statement) => resourcesOf(statement))).toEqual([{ 'Fn::ImportValue': names.queueArn('moves') }]);
    expect(variablesOf(synthesized, definitionNamed('item-moves'))).toMatchObject({
      MOVE_QUEUE_URL: { 'Fn::ImportValue': names.queueUrl('moves') },
    });
    const items = statementsOf('items').filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
    expect(items.flatMap((statement) => resourcesOf(statement))).toContainEqual({ 'Fn::ImportValue': names.queueArn('moves') });
  });

  it('grants dynamodb:PartiQLUpdate to the items function and the move worker only (the two that carry or rebase a tree)', () => {
    const withPartiql = FUNCTIONS.filter((definition) =>
      allowedActions(statementsOf(definition.name), 'dynamodb').includes('dynamodb:PartiQLUpdate'),
    ).map((definition) => definition.name);

    expect(withPartiql.sort()).toEqual(['item-moves', 'items']);
  });

  it('runs webhook deliveries in several concurrent batches', () => {
    const [, source] = Object.entries(synthesized.templates.workers.findResources('AWS::Lambda::EventSourceMapping')).find(([, resource]) =>
      JSON.stringify(resource).includes(names.queueArn('webhookDelivery')),
    )!;
    expect(source.Properties.ScalingConfig).toEqual({ MaximumConcurrency: QUEUES.webhookDelivery.maxConcurrency });
  });

  it('lets upload-confirmed read objects of the upload bucket but not write them', () => {
    const statements = statementsOf('upload-confirmed');
    const s3 = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('s3:')));

    expect(s3).toContainEqual(
      expect.objectContaining({
        Effect: 'Allow',
        Action: expect.arrayContaining(['s3:GetObject*']),
        Resource: expect.arrayContaining([bucketObjectsArn()]),
      }),
    );
    expect(allowedActions(statements, 's3').filter((action) => /^s3:(Put|Delete)/.test(action))).toEqual([]);
  });

  it('lets messages read objects (attachment links) but not write them, and send to the conversion queue only', () => {
    const statements = statementsOf('messages');
    const sending = statements.filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));

    expect(allowedActions(statements, 's3')).toEqual(expect.arrayContaining(['s3:GetObject*']));
    expect(allowedActions(statements, 's3').filter((action) => /^s3:(Put|Delete)/.test(action))).toEqual([]);
    expect(sending).toHaveLength(1);
    expect(resourcesOf(sending[0]!)).toEqual([{ 'Fn::ImportValue': names.queueArn('conversion') }]);
  });

  it('lets conversion send messages to its own queue (archive batches, object deletions, the content of a deleted workspace) only: its events go out through the stream', () => {
    for (const name of ['conversion', 'conversion-dead-letters']) {
      const sending = statementsOf(name).filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
      expect(sending.flatMap(resourcesOf), name).toContainEqual({ 'Fn::ImportValue': names.queueArn('conversion') });
      expect(JSON.stringify(sending), name).not.toContain(names.queueArn('webhookDelivery'));
      expect(variablesOf(synthesized, definitionNamed(name)), name).not.toHaveProperty('WEBHOOK_QUEUE_URL');
    }
  });

  it('lets the thumbnail renderer send to its own queue only (the page screenshot of each view mode), and the threads function to the conversion and thumbnails queues (locating a new pin on the page screenshot)', () => {
    const sendingTo = (name: string) =>
      statementsOf(name)
        .filter((statement) => actionsOf(statement).includes('sqs:SendMessage'))
        .flatMap(resourcesOf);

    expect(sendingTo('thumbnail-renderer')).toEqual([{ 'Fn::ImportValue': names.queueArn('thumbnails') }]);
    expect(variablesOf(synthesized, definitionNamed('thumbnail-renderer'))).toMatchObject({
      THUMBNAIL_QUEUE_URL: { 'Fn::ImportValue': names.queueUrl('thumbnails') },
    });
    expect(sendingTo('threads')).toHaveLength(2);
    expect(sendingTo('threads')).toEqual(
      expect.arrayContaining([{ 'Fn::ImportValue': names.queueArn('conversion') }, { 'Fn::ImportValue': names.queueArn('thumbnails') }]),
    );
  });

  it('keeps the dead letters the conversion consumer handled in a hold queue behind its dead-letter queue, which only that consumer may send to', () => {
    const [holdId, hold] = deadLetterHoldResource('conversion');
    const [, deadLetterQueue] = deadLetterQueueResource('conversion');
    const sending = statementsOf('conversion-dead-letters').filter((statement) => actionsOf(statement).includes('sqs:SendMessage'));
    const sendsToHold = (name: string) =>
      statementsOf(name).some((statement) => JSON.stringify(resourcesOf(statement)).includes(names.deadLetterHoldArn('conversion')));

    expect(heldQueues).toEqual(['conversion']);
    expect(deadLetterQueue.Properties?.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [holdId, 'Arn'] },
      maxReceiveCount: QUEUES.conversion.deadLetterHold.maxReceiveCount,
    });
    expect(hold.Properties?.MessageRetentionPeriod).toBe(QUEUES.conversion.deadLetterRetentionDays * 24 * 3600);
    expect(sending.flatMap(resourcesOf)).toContainEqual({ 'Fn::ImportValue': names.deadLetterHoldArn('conversion') });
    expect(FUNCTIONS.filter((definition) => sendsToHold(definition.name)).map((definition) => definition.name)).toEqual([
      'conversion-dead-letters',
    ]);
  });

  it('gives openapi nothing but its own log group', () => {
    const definition = definitionNamed('openapi');
    const [logGroupId] = findByLogicalIdPrefix(templateOf(synthesized, definition), 'AWS::Logs::LogGroup', 'OpenapiFunctionLogGroup');
    const statements = statementsOf('openapi');

    expect(statements).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
      }),
    ]);
  });

  it.each(FUNCTIONS.map((definition) => [definition.name, definition] as const))(
    'sets only the environment variables %s has access for',
    (_name, definition) => {
      const [, fn] = functionResource(templateOf(synthesized, definition), definition);
      const variables = Object.keys(fn.Properties?.Environment.Variables as Record<string, unknown>);
      const { access } = definition;

      expect(variables.includes('TABLE_NAME')).toBe(access.table !== undefined);
      expect(variables.includes('BUCKET_NAME')).toBe(access.bucket !== undefined);
      expect(variables.includes('CONVERSION_QUEUE_URL')).toBe(access.sendsTo?.includes('conversion') ?? false);
      expect(variables.includes('WEBHOOK_QUEUE_URL')).toBe(access.sendsTo?.includes('webhookDelivery') ?? false);
      expect(variables.includes('CONVERSION_DEAD_LETTER_HOLD_QUEUE_URL')).toBe(
        access.sendsToDeadLetterHold?.includes('conversion') ?? false,
      );
    },
  );

  it('attaches no managed policy to any function role', () => {
    for (const definition of FUNCTIONS) {
      const template = templateOf(synthesized, definition);
      const [, fn] = functionResource(template, definition);
      const roleId = (fn.Properties?.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];

      expect(template.toJSON().Resources[roleId].Properties.ManagedPolicyArns).toBeUndefined();
    }
  });
});

describe('house defaults of every function (STYLE: one NodejsFunction construct)', () => {
  it.each(FUNCTIONS.map((definition) => [definition.name, definition] as const))(
    'runs %s on Node 22 (nodejs20.x is deprecated) and its architecture (arm64 unless declared) with source maps and a one-month log group',
    (_name, definition) => {
      const template = templateOf(synthesized, definition);
      const [, fn] = functionResource(template, definition);
      const logGroupRef = fn.Properties?.LoggingConfig.LogGroup as { Ref: string };

      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: [definition.architecture ?? 'arm64'],
        Handler: 'index.handler',
        MemorySize: definition.memoryMb ?? 512,
        Environment: { Variables: expect.objectContaining({ NODE_OPTIONS: '--enable-source-maps' }) },
      });
      expect(template.toJSON().Resources[logGroupRef.Ref].Properties.RetentionInDays).toBe(30);
    },
  );

  it.each(FUNCTIONS.map((definition) => [definition.name, definition] as const))(
    'gives %s only settings its config accepts at cold start: exchange tokens live at most an hour (DESIGN "Trust rules")',
    (_name, definition) => {
      const variables = variablesOf(synthesized, definition);
      // Values CloudFormation resolves at deploy time (references, imports) are not the CDK's choice.
      const literal = Object.fromEntries(
        Object.entries(variables).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );

      expect(() => parseConfig(literal)).not.toThrow();
      expect(Number(variables[ENV.exchangeTokenTtlSeconds] ?? 300)).toBeLessThanOrEqual(MAX_EXCHANGE_TOKEN_TTL_SECONDS);
    },
  );

  it.each(FUNCTIONS.map((definition) => [definition.name, definition] as const))(
    'ships %s as a zipped code asset even when bundling is skipped',
    (_name, definition) => {
      const [, fn] = functionResource(templateOf(synthesized, definition), definition);

      expect(fn.Properties?.Code).toMatchObject({ S3Key: expect.stringMatching(/^[0-9a-f]{64}\.zip$/) });
    },
  );
});

describe('cdk-nag AwsSolutions checks', () => {
  // cdk-nag v3 is a policy-validation plugin: findings go to the synth's validation report (and fail
  // an in-memory synth), not to annotations, so Annotations.findError would always be empty. Running
  // the same pack over the synthesized tree reports what is left after acknowledgements.
  it('leaves no unacknowledged finding', () => {
    const report = new AwsSolutionsChecks().validateScope(synthesized.app);
    const findings = report.violations.map(
      (violation) => `${violation.severity} ${violation.ruleName}: ${violation.violatingResources.map((r) => r.constructPath).join(', ')}`,
    );

    expect(findings).toEqual([]);
  });
});

describe('the thumbnail renderer (a Chromium build made for Lambda)', () => {
  it('runs on x86-64 with the packed Chromium layer and tells the code where the layer is mounted', () => {
    const definition = FUNCTIONS.find((candidate) => candidate.chromium)!;
    const template = templateOf(synthesized, definition);
    const [, fn] = functionResource(template, definition);
    const [layerId, layer] = findByLogicalIdPrefix(template, 'AWS::Lambda::LayerVersion', 'ChromiumLayer');

    expect(definition.architecture).toBe('x86_64');
    expect(fn.Properties).toMatchObject({
      Architectures: ['x86_64'],
      Layers: [{ Ref: layerId }],
      Environment: { Variables: expect.objectContaining({ CHROMIUM_PACK_DIR: '/opt/bin' }) },
    });
    expect(layer.Properties?.CompatibleArchitectures).toEqual(['x86_64']);
  });
});

describe('markup links (context appUrl)', () => {
  it('passes appUrl to the functions as APP_URL, and refuses a value that is not an http(s) URL', () => {
    const withAppUrl = synthesizeApp({ appUrl: 'https://review.example.com' });
    const markups = FUNCTIONS.find((definition) => definition.name === 'markups')!;
    const [, fn] = functionResource(templateOf(withAppUrl, markups), markups);

    expect(fn.Properties?.Environment.Variables.APP_URL).toBe('https://review.example.com');
    expect(() => synthesizeApp({ appUrl: 'review.example.com' })).toThrow(/appUrl/);
  });

  it(
    'gives no function API_URL (webhook bodies link through appUrl too), and warns when context apiUrl is still given',
    () => {
      const withApiUrl = synthesizeApp({ apiUrl: 'https://api.review.example.com' });
      for (const definition of FUNCTIONS) expect(variablesOf(withApiUrl, definition), definition.name).not.toHaveProperty('API_URL');
      Annotations.fromStack(withApiUrl.workers).hasWarning('*', Match.stringLikeRegexp('Context apiUrl is no longer read'));
      expect(Annotations.fromStack(synthesized.workers).findWarning('*', Match.stringLikeRegexp('apiUrl'))).toEqual([]);
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('uploads that are never confirmed expire', () => {
  it('expires objects under the upload prefix still tagged unconfirmed after two days', () => {
    Template.fromStack(synthesized.data).hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({
            Id: 'ExpireUnconfirmedUploads',
            Prefix: 'uploads/',
            TagFilters: [{ Key: 'upload-state', Value: 'unconfirmed' }],
            ExpirationInDays: 2,
            Status: 'Enabled',
          }),
        ]),
      },
    });
  });
});

describe('the conversion worker (converters as a layer, room for large files)', () => {
  it('runs on x86-64 with the converters layer, 4 GB, 10 GiB of /tmp and a timeout a sixth of the visibility timeout', () => {
    const definition = FUNCTIONS.find((candidate) => candidate.name === 'conversion')!;
    const template = templateOf(synthesized, definition);
    const [, fn] = functionResource(template, definition);
    const [layerId, layer] = findByLogicalIdPrefix(template, 'AWS::Lambda::LayerVersion', 'ConvertersLayer');

    expect(fn.Properties).toMatchObject({
      Architectures: ['x86_64'],
      MemorySize: 4096,
      EphemeralStorage: { Size: 10240 },
      Timeout: QUEUES.conversion.workerTimeoutSeconds,
      Layers: [{ Ref: layerId }],
    });
    expect(layer.Properties?.CompatibleArchitectures).toEqual(['x86_64']);
    expect(QUEUES.conversion.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * QUEUES.conversion.workerTimeoutSeconds);
  });

  it("runs the layer's static FFmpeg 7.1 (FFMPEG_PATH), and only the conversion worker has it", () => {
    for (const definition of FUNCTIONS) {
      const variables = (
        functionResource(templateOf(synthesized, definition), definition)[1].Properties as {
          Environment: { Variables: Record<string, unknown> };
        }
      ).Environment.Variables;
      if (definition.name === 'conversion') expect(variables).toMatchObject({ FFMPEG_PATH: '/opt/ffmpeg/bin/ffmpeg' });
      else expect(variables, definition.name).not.toHaveProperty('FFMPEG_PATH');
    }
  });

  it(
    'stages the layer with the packages under nodejs/node_modules and an executable ffmpeg (with its licence) at FFMPEG_LAYER_PATH',
    async () => {
      // Staging builds ffmpeg when it is missing; a fresh clone's run builds it already (test/support/ffmpeg-setup.ts).
      await ffmpegBuilt();
      const outdir = mkdtempSync(join(tmpdir(), 'layer-synth-'));
      try {
        const app = new App({ outdir });
        convertersLayer(new Stack(app, 'LayerOnly'), REPO_ROOT);
        app.synth();
        // The layer is the stack's only asset, staged as asset.<hash> in the cloud assembly.
        const assets = readdirSync(outdir).filter((name) => name.startsWith('asset.'));
        expect(assets).toHaveLength(1);
        const staged = join(outdir, assets[0]!);
        const ffmpeg = join(staged, FFMPEG_LAYER_PATH.replace(/^\/opt\//, ''));

        expect(statSync(ffmpeg).mode & 0o111).toBe(0o111);
        expect(readFileSync(join(staged, 'ffmpeg', 'COPYING.GPLv2'), 'utf8')).toContain('GNU GENERAL PUBLIC LICENSE');
        for (const { name } of CONVERTER_PACKAGES)
          expect(existsSync(join(staged, 'nodejs', 'node_modules', name, 'package.json')), name).toBe(true);
        expect(existsSync(join(staged, 'nodejs', 'node_modules', '@ffmpeg-installer'))).toBe(false);
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    SYNTH_TIMEOUT_MS + FFMPEG_WAIT_MS,
  );

  it(
    'builds ffmpeg before it stages the layer in a clone that has none (npm ci builds nothing), and says how when the build fails',
    () => {
      // A clone of its own (the lockfile, the installed packages and a stand-in build script), so the
      // repository's build is never touched.
      const root = mkdtempSync(join(tmpdir(), 'layer-clone-'));
      const stage = () => {
        const app = new App({ outdir: join(root, `cdk.out.${readdirSync(root).length}`) });
        convertersLayer(new Stack(app, 'LayerOnly'), root);
        return app.synth().directory;
      };
      const script = (body: string) =>
        writeFileSync(join(root, 'infra', 'tools', 'build-ffmpeg.sh'), `#!/bin/sh\nroot=$(cd "$(dirname "$0")/../.." && pwd)\n${body}\n`, {
          mode: 0o755,
        });
      try {
        symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
        cpSync(join(REPO_ROOT, 'package-lock.json'), join(root, 'package-lock.json'));
        mkdirSync(join(root, 'infra', 'tools'), { recursive: true });

        script('mkdir -p "$root/.converters" && echo "gcc is needed to build ffmpeg" >"$root/.converters/ffmpeg.failed" && exit 1');
        expect(stage).toThrow(
          'ffmpeg could not be built (gcc is needed to build ffmpeg): run npm run converters:ffmpeg and see .converters/ffmpeg-build.log',
        );

        script(
          [
            'mkdir -p "$root/.converters/ffmpeg/bin" && printf "#!/bin/sh\\n" >"$root/.converters/ffmpeg/bin/ffmpeg" && chmod 755 "$root/.converters/ffmpeg/bin/ffmpeg"',
            'echo "GNU GENERAL PUBLIC LICENSE" >"$root/.converters/ffmpeg/COPYING.GPLv2"',
            'sha256sum "$0" | cut -d" " -f1 >"$root/.converters/ffmpeg/BUILD"',
          ].join('\n'),
        );
        const assembly = stage();
        const [asset] = readdirSync(assembly).filter((name) => name.startsWith('asset.'));
        expect(statSync(join(assembly, asset!, 'ffmpeg', 'bin', 'ffmpeg')).mode & 0o111).toBe(0o111);
        expect(readFileSync(join(assembly, asset!, 'ffmpeg', 'BUILD'), 'utf8').trim()).toBe(ffmpegBuildId(root));
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('Powertools on every function (service name, metrics namespace from context metricsNamespace)', () => {
  it('names each function as the service of its log lines and metrics, in the ReviewBoardService namespace by default', () => {
    for (const definition of FUNCTIONS) {
      expect(variablesOf(synthesized, definition), definition.name).toMatchObject({
        POWERTOOLS_SERVICE_NAME: definition.name,
        POWERTOOLS_METRICS_NAMESPACE: 'ReviewBoardService',
      });
    }
  });

  it(
    'takes the namespace from -c metricsNamespace, and refuses one CloudWatch would not accept',
    () => {
      const custom = synthesizeApp({ metricsNamespace: 'Acme/ReviewBoard' });
      for (const definition of FUNCTIONS)
        expect(variablesOf(custom, definition), definition.name).toMatchObject({ POWERTOOLS_METRICS_NAMESPACE: 'Acme/ReviewBoard' });
      expect(() => synthesizeApp({ metricsNamespace: 'AWS/Lambda' })).toThrow('Context "metricsNamespace" must be');
      expect(() => synthesizeApp({ metricsNamespace: 'has space' })).toThrow('Context "metricsNamespace" must be');
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('the optional EPS converter (context epsConverter; Ghostscript, AGPL-3.0, installed apart)', () => {
  const conversion = definitionNamed('conversion');
  const layerOf = (app: SynthesizedApp) => findByLogicalIdPrefix(app.templates.workers, 'AWS::Lambda::LayerVersion', 'ConvertersLayer')[1];
  /** The layer's hash when it holds exactly the default converters: the locked versions of CONVERTER_PACKAGES and the ffmpeg build. */
  const defaultLock = () => {
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const versions = CONVERTER_PACKAGES.map(({ name }) => `${name}@${lock.packages[`node_modules/${name}`]?.version ?? 'missing'}`);
    versions.push(`ffmpeg@${ffmpegBuildId()}`);
    return createHash('sha256').update(versions.join('\n')).digest('hex');
  };
  const installed = existsSync(new URL('../../node_modules/@okathira/ghostpdl-wasm/package.json', import.meta.url));

  it('is off by default: no EPS_CONVERTER on any function, and the layer is the default one, without ghostpdl', () => {
    const layer = layerOf(synthesized);

    for (const definition of FUNCTIONS) expect(variablesOf(synthesized, definition), definition.name).not.toHaveProperty('EPS_CONVERTER');
    expect(CONVERTER_PACKAGES.map(({ name }) => name)).not.toContain('@okathira/ghostpdl-wasm');
    expect(layer.Properties?.Description).toBe(
      `Converters (sharp, pdfium, ag-psd, ffmpeg) for the conversion worker; lock ${defaultLock().slice(0, 12)}`,
    );
    expect(synthesized.settings.epsConverter).toBe(false);
  });

  it.skipIf(!installed)(
    'on (-c epsConverter=true), with the package installed: the conversion worker gets EPS_CONVERTER=ghostscript and a layer with ghostpdl',
    () => {
      const withEps = synthesizeApp({ epsConverter: 'true' });
      const layer = layerOf(withEps);

      expect(variablesOf(withEps, conversion)).toMatchObject({ EPS_CONVERTER: 'ghostscript' });
      for (const definition of FUNCTIONS.filter((candidate) => candidate !== conversion))
        expect(variablesOf(withEps, definition), definition.name).not.toHaveProperty('EPS_CONVERTER');
      expect(layer.Properties?.Description).toMatch(
        /^Converters \(sharp, pdfium, ag-psd, ffmpeg, ghostpdl-wasm\) for the conversion worker; lock [0-9a-f]{12}$/,
      );
      expect(layer.Properties?.Description).not.toContain(defaultLock().slice(0, 12));
      expect(layer.Properties?.Content).not.toEqual(layerOf(synthesized).Properties?.Content);
    },
    SYNTH_TIMEOUT_MS,
  );

  it.skipIf(installed)(
    'on, with the package not installed: synth fails saying how to install it',
    () => {
      expect(() => synthesizeApp({ epsConverter: true })).toThrow(
        'epsConverter is on but @okathira/ghostpdl-wasm is not installed: run npm run converters:eps before synth',
      );
    },
    SYNTH_TIMEOUT_MS,
  );
});

describe('exchange-token key: an asymmetric KMS key; only the auth function signs, credentialed functions only read its public key', () => {
  const statementsOf = (definition: FunctionDefinition) =>
    rolePolicyStatements(templateOf(synthesized, definition), functionIdOf(definition));
  const environmentOf = (definition: FunctionDefinition) =>
    (
      functionResource(templateOf(synthesized, definition), definition)[1].Properties as {
        Environment: { Variables: Record<string, unknown> };
      }
    ).Environment.Variables;
  const keyArn = () => ({
    'Fn::GetAtt': [findByLogicalIdPrefix(synthesized.templates.api, 'AWS::KMS::Key', 'ExchangeTokenKey')[0], 'Arn'],
  });
  /** The KMS statements of a function's role: every action, and every resource they name. */
  const kmsGrants = (definition: FunctionDefinition) => {
    const statements = statementsOf(definition).filter((statement) => actionsOf(statement).some((action) => action.startsWith('kms:')));
    return { actions: allowedActions(statements, 'kms').sort(), resources: statements.flatMap(resourcesOf) };
  };
  const credentialed = apiFunctions.filter((definition) => definition.routes.some((route) => route.auth === 'apiKey'));

  it('is one ECC_NIST_P256 SIGN_VERIFY key in the API stack, and no Secrets Manager secret holds a key (the only secret is the origin-verify value)', () => {
    const api = synthesized.templates.api;
    api.resourceCountIs('AWS::KMS::Key', 1);
    api.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    for (const [name, template] of Object.entries(synthesized.templates))
      template.resourceCountIs('AWS::SecretsManager::Secret', name === 'api' ? 1 : 0);
    api.hasResourceProperties('AWS::SecretsManager::Secret', { Description: Match.stringLikeRegexp('X-Origin-Verify') });
  });

  it('lets the auth function, which mints exchange and session tokens and verifies session tokens (sign-out), kms:Sign and kms:GetPublicKey with that one key, and nothing more on it', () => {
    const auth = definitionNamed('auth');
    expect(credentialed).toContain(auth);
    expect(environmentOf(auth).EXCHANGE_KEY_ARN).toEqual(keyArn());
    expect(kmsGrants(auth)).toEqual({ actions: ['kms:GetPublicKey', 'kms:Sign'], resources: [keyArn()] });
  });

  it('gives every other credentialed api function the key ARN and kms:GetPublicKey on that one key only, never kms:Sign', () => {
    expect(credentialed.length).toBeGreaterThan(5);
    for (const definition of credentialed.filter((candidate) => candidate.name !== 'auth')) {
      expect(environmentOf(definition).EXCHANGE_KEY_ARN, definition.name).toEqual(keyArn());
      expect(kmsGrants(definition), definition.name).toEqual({ actions: ['kms:GetPublicKey'], resources: [keyArn()] });
    }
  });

  it('gives the api functions without credentialed routes (other than auth) and the workers neither the key nor any KMS action', () => {
    const others = FUNCTIONS.filter((definition) => definition.name !== 'auth' && !credentialed.includes(definition as ApiFunction));
    expect(others.some((definition) => definition.kind === 'api')).toBe(true);
    expect(others.some((definition) => definition.kind !== 'api')).toBe(true);
    for (const definition of others) {
      expect(kmsGrants(definition).actions, definition.name).toEqual([]);
      expect(environmentOf(definition), definition.name).not.toHaveProperty('EXCHANGE_KEY_ARN');
    }
  });
});

describe('identity provider of the SDK exchange (context idpJwksUrl, idpIssuer, idpAudience)', () => {
  it('passes the three to the auth function only, and refuses a partial or non-https setting', () => {
    const idp = {
      idpJwksUrl: 'https://idp.example.com/.well-known/jwks.json',
      idpIssuer: 'https://idp.example.com/',
      idpAudience: 'review-board',
    };
    const withIdp = synthesizeApp(idp);
    for (const definition of apiFunctions) {
      const [, fn] = functionResource(templateOf(withIdp, definition), definition);
      const variables = fn.Properties?.Environment.Variables as Record<string, unknown>;
      if (definition.name === 'auth') {
        expect(variables).toMatchObject({ IDP_JWKS_URL: idp.idpJwksUrl, IDP_ISSUER: idp.idpIssuer, IDP_AUDIENCE: idp.idpAudience });
      } else {
        expect(variables, definition.name).not.toHaveProperty('IDP_JWKS_URL');
      }
    }
    expect(() => synthesizeApp({ idpJwksUrl: idp.idpJwksUrl })).toThrow(/go together/);
    expect(() => synthesizeApp({ ...idp, idpJwksUrl: 'http://idp.example.com/jwks' })).toThrow(/https/);
  });
});

describe("the origin-verify value (X-Origin-Verify: only requests through the distribution may name their viewer's address)", () => {
  it('is generated by Secrets Manager at deploy time, and every api function gets it as a dynamic reference, never as text; no worker gets it', () => {
    const api = synthesized.templates.api;
    const [secretId, secret] = Object.entries(api.findResources('AWS::SecretsManager::Secret'))[0]!;
    expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 48, ExcludePunctuation: true });
    expect(secret.Properties.SecretString).toBeUndefined();

    for (const definition of apiFunctions) {
      expect(variablesOf(synthesized, definition)[ENV.originVerify], definition.name).toEqual({
        'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']],
      });
    }
    for (const definition of FUNCTIONS.filter((candidate) => candidate.kind !== 'api'))
      expect(variablesOf(synthesized, definition), definition.name).not.toHaveProperty(ENV.originVerify);
  });

  it('refuses a value shorter than 32 characters', () => {
    expect(() => parseConfig({ [ENV.originVerify]: 'short' })).toThrow(/ORIGIN_VERIFY: must be at least 32 characters/);
    expect(parseConfig({ [ENV.originVerify]: 'x'.repeat(48) }).originVerify).toBe('x'.repeat(48));
  });
});
