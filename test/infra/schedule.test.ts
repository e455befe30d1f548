import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type ScheduledFunction } from '../../functions/registry.js';
import { functionIdOf } from '../../infra/constructs/service-function.js';
import { dataExportNames } from '../../infra/stacks/data-stack.js';
import {
  actionsOf,
  allowedActions,
  findByLogicalIdPrefix,
  functionResource,
  resourcesOf,
  rolePolicyStatements,
  synthesizeApp,
  type CfnResource,
  type SynthesizedApp,
} from './synth-app.js';

const SYNTH_TIMEOUT_MS = 120_000;

let synthesized: SynthesizedApp;
let names: ReturnType<typeof dataExportNames>;

beforeAll(() => {
  synthesized = synthesizeApp();
  names = dataExportNames(synthesized.data.stackName);
}, SYNTH_TIMEOUT_MS);

const sweep = FUNCTIONS.find((definition): definition is ScheduledFunction => definition.name === 'pending-work-sweep')!;

describe('the pending-work sweep runs on a schedule (DESIGN.md "Deletion takes everything": a lost job is recovered by a sweep)', () => {
  it('is a scheduled function in the registry, every 5 minutes, that reads and writes the table and sends only conversion, thumbnail and move jobs', () => {
    expect(sweep).toMatchObject({
      kind: 'schedule',
      everyMinutes: 5,
      access: { table: 'readWrite', sendsTo: ['conversion', 'thumbnails', 'moves'] },
    });
    expect(sweep.access).not.toHaveProperty('bucket');
  });

  it('is invoked by one EventBridge rule at that rate, retried twice within an hour, with a dead-letter queue (SSE, 14 days)', () => {
    const [functionId] = functionResource(synthesized.templates.workers, sweep);
    const [failuresId, failures] = findByLogicalIdPrefix(
      synthesized.templates.workers,
      'AWS::SQS::Queue',
      'PendingWorkSweepScheduleFailures',
    );
    // Its own rule (the live sweep, issue 32, has another).
    const rules = Object.values(synthesized.templates.workers.findResources('AWS::Events::Rule') as Record<string, CfnResource>).filter(
      (rule) =>
        (rule.Properties?.Targets ?? []).some(
          (target: { Arn: unknown }) => JSON.stringify(target.Arn) === JSON.stringify({ 'Fn::GetAtt': [functionId, 'Arn'] }),
        ),
    );

    expect(rules).toHaveLength(1);
    expect(rules[0]!.Properties).toMatchObject({
      ScheduleExpression: 'rate(5 minutes)',
      State: 'ENABLED',
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [functionId, 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [failuresId, 'Arn'] } },
        },
      ],
    });
    expect(failures.Properties).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    synthesized.templates.workers.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [functionId, 'Arn'] },
      Principal: 'events.amazonaws.com',
    });
  });

  it('lets the sweep send only to the conversion, thumbnail and move queues, touch no bucket and use the table with its indexes only', () => {
    const statements = rolePolicyStatements(synthesized.templates.workers, functionIdOf(sweep));
    const queues = statements.filter((statement) => actionsOf(statement).includes('sqs:SendMessage')).flatMap(resourcesOf);

    expect(queues.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      [
        { 'Fn::ImportValue': names.queueArn('conversion') },
        { 'Fn::ImportValue': names.queueArn('thumbnails') },
        { 'Fn::ImportValue': names.queueArn('moves') },
      ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    );
    expect(allowedActions(statements, 's3')).toEqual([]);
    expect(allowedActions(statements, 'dynamodb')).toEqual(
      expect.arrayContaining(['dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:UpdateItem']),
    );
    expect(JSON.stringify(statements)).not.toContain(names.tableStreamArn);
  });

  it('gives every function that is not a scheduled one no rule', () => {
    const scheduled = FUNCTIONS.filter((definition) => definition.kind === 'schedule');
    expect(scheduled.map((definition) => definition.name).sort()).toEqual(['live-sweep', 'pending-work-sweep']);
    const expected = scheduled.map((definition) => ({
      'Fn::GetAtt': [functionResource(synthesized.templates.workers, definition)[0], 'Arn'],
    }));
    const targets = Object.values(synthesized.templates.workers.findResources('AWS::Events::Rule') as Record<string, CfnResource>).flatMap(
      (rule) => rule.Properties?.Targets ?? [],
    );
    const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));
    expect(targets.map((target: { Arn: unknown }) => target.Arn).sort(byText)).toEqual(expected.sort(byText));
  });
});
