import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionDefinition } from '../../functions/registry.js';
import { functionIdOf } from '../../infra/constructs/service-function.js';
import { dataExportNames } from '../../infra/stacks/data-stack.js';
import { STREAM_BATCH_SIZE, STREAM_RETRY_ATTEMPTS } from '../../infra/stacks/workers-stack.js';
import { Match } from 'aws-cdk-lib/assertions';
import { OUTBOX_STREAM_FILTER } from '../../shared/events/outbox-stream.js';
import {
  actionsOf,
  allowedActions,
  findByLogicalIdPrefix,
  functionResource,
  resourcesOf,
  rolePolicyStatements,
  synthesizeApp,
  templateOf,
  type SynthesizedApp,
} from './synth-app.js';

const SYNTH_TIMEOUT_MS = 120_000;

let synthesized: SynthesizedApp;
let names: ReturnType<typeof dataExportNames>;

beforeAll(() => {
  synthesized = synthesizeApp();
  names = dataExportNames(synthesized.data.stackName);
}, SYNTH_TIMEOUT_MS);

const fanout = FUNCTIONS.find((definition) => definition.name === 'webhook-fanout')!;
const statementsOf = (definition: FunctionDefinition) =>
  rolePolicyStatements(templateOf(synthesized, definition), functionIdOf(definition));
const STREAM_READ = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];

describe('the table stream feeds the webhook fan-out (issue 12 item 2)', () => {
  it('gives the table a NEW_IMAGE stream and exports its ARN', () => {
    synthesized.templates.data.hasResourceProperties('AWS::DynamoDB::Table', { StreamSpecification: { StreamViewType: 'NEW_IMAGE' } });
    const outputs = synthesized.templates.data.findOutputs('*', { Export: { Name: names.tableStreamArn } });
    expect(Object.values(outputs)).toHaveLength(1);
  });

  it('is a stream consumer in the registry, with table read and the webhook queue only', () => {
    expect(fanout).toMatchObject({ kind: 'stream', filter: OUTBOX_STREAM_FILTER, access: { table: 'read', sendsTo: ['webhookDelivery'] } });
  });

  it('maps the stream to webhook-fanout from TRIM_HORIZON, with the shared filter, item failures, bisection, retries until success (no maximum age: an outage loses nothing) and an on-failure queue', () => {
    const [functionId] = functionResource(synthesized.templates.workers, fanout);
    const [failuresId, failures] = findByLogicalIdPrefix(synthesized.templates.workers, 'AWS::SQS::Queue', 'WebhookFanoutStreamFailures');

    synthesized.templates.workers.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId },
      EventSourceArn: { 'Fn::ImportValue': names.tableStreamArn },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: STREAM_BATCH_SIZE,
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(OUTBOX_STREAM_FILTER) }] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      MaximumRecordAgeInSeconds: Match.absent(),
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failuresId, 'Arn'] } } },
    });
    expect(failures.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    expect(STREAM_RETRY_ATTEMPTS).toBe(-1);
  });

  it('filters on INSERT of Event and EventBatch items, nothing else', () => {
    expect(OUTBOX_STREAM_FILTER).toEqual({ eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['Event', 'EventBatch'] } } } });
  });

  it('lets webhook-fanout read the table and its stream, never write the table, and send only to the webhook queue and its failure queue', () => {
    const statements = statementsOf(fanout);
    const dynamo = allowedActions(statements, 'dynamodb');
    const [failuresId] = findByLogicalIdPrefix(synthesized.templates.workers, 'AWS::SQS::Queue', 'WebhookFanoutStreamFailures');

    expect(dynamo).toEqual(expect.arrayContaining(['dynamodb:Query', ...STREAM_READ]));
    for (const write of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'])
      expect(dynamo).not.toContain(write);
    const onStream = statements.filter((statement) => JSON.stringify(resourcesOf(statement)).includes(names.tableStreamArn));
    expect(onStream.flatMap(actionsOf).sort()).toEqual(STREAM_READ);
    for (const statement of onStream) expect(resourcesOf(statement)).toEqual([{ 'Fn::ImportValue': names.tableStreamArn }]);
    const listStreams = statements.filter((statement) => actionsOf(statement).includes('dynamodb:ListStreams'));
    for (const statement of listStreams) expect(actionsOf(statement)).toEqual(['dynamodb:ListStreams']);
    const queues = statements.filter((statement) => actionsOf(statement).includes('sqs:SendMessage')).flatMap(resourcesOf);
    expect(queues).toEqual(
      expect.arrayContaining([{ 'Fn::ImportValue': names.queueArn('webhookDelivery') }, { 'Fn::GetAtt': [failuresId, 'Arn'] }]),
    );
    expect(queues).toHaveLength(2);
    expect(allowedActions(statements, 's3')).toEqual([]);
  });

  it('gives no other function the stream than the stream consumers (the webhook fan-out and the live fan-out, issue 32), each on its own mapping', () => {
    const consumers = FUNCTIONS.filter((candidate) => candidate.kind === 'stream');
    expect(consumers.map((consumer) => consumer.name).sort()).toEqual(['live-fanout', 'webhook-fanout']);
    for (const definition of FUNCTIONS.filter((candidate) => candidate.kind !== 'stream')) {
      expect(JSON.stringify(statementsOf(definition)), definition.name).not.toContain(names.tableStreamArn);
    }
    synthesized.templates.workers.resourcePropertiesCountIs(
      'AWS::Lambda::EventSourceMapping',
      { EventSourceArn: { 'Fn::ImportValue': names.tableStreamArn } },
      consumers.length,
    );
  });
});
