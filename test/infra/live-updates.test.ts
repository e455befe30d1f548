import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS, type FunctionDefinition } from '../../functions/registry.js';
import { LIVE_SOCKET_ROUTES } from '../../functions/live-socket/routes.js';
import { functionIdOf } from '../../infra/constructs/service-function.js';
import { dataExportNames } from '../../infra/stacks/data-stack.js';
import { LIVE_STAGE, STREAM_BATCH_SIZE, STREAM_RETRY_ATTEMPTS, workersExportNames } from '../../infra/stacks/workers-stack.js';
import { ENV } from '../../shared/config.js';
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
  variablesOf,
  type CfnResource,
  type SynthesizedApp,
} from './synth-app.js';

/** Issue 32 item 2, deployed: the live-update WebSocket API, its function, its fan-out, their permissions and alarms. */

const SYNTH_TIMEOUT_MS = 240_000;

let synthesized: SynthesizedApp;
let workers: Template;

beforeAll(() => {
  synthesized = synthesizeApp();
  workers = synthesized.templates.workers;
}, SYNTH_TIMEOUT_MS);

const named = (name: string) => FUNCTIONS.find((definition) => definition.name === name)!;
const socket = named('live-socket');
const fanOut = named('live-fanout');
const tickets = named('live');
const sweep = named('live-sweep');
const statementsOf = (definition: FunctionDefinition) =>
  rolePolicyStatements(templateOf(synthesized, definition), functionIdOf(definition));
const apiId = () => findByLogicalIdPrefix(workers, 'AWS::ApiGatewayV2::Api', 'LiveApi')[0];
const alarmsOf = (template: Template) =>
  Object.values(template.findResources('AWS::CloudWatch::Alarm') as Record<string, CfnResource>).map((alarm) => alarm.Properties!);

describe('the live-update WebSocket API (issue 32 item 2)', () => {
  it('is an API Gateway WebSocket API with one stage', () => {
    const [, api] = findByLogicalIdPrefix(workers, 'AWS::ApiGatewayV2::Api', 'LiveApi');
    expect(api.Properties).toMatchObject({ ProtocolType: 'WEBSOCKET' });
    workers.hasResourceProperties('AWS::ApiGatewayV2::Stage', { ApiId: { Ref: apiId() }, StageName: LIVE_STAGE, AutoDeploy: true });
  });

  it('routes $connect, $disconnect and $default, each to the live-socket function (its route group), and nothing else', () => {
    expect(socket).toMatchObject({ kind: 'websocket', routes: [...LIVE_SOCKET_ROUTES] });
    const routes = Object.values(workers.findResources('AWS::ApiGatewayV2::Route') as Record<string, CfnResource>).filter(
      (route) => JSON.stringify(route.Properties!.ApiId) === JSON.stringify({ Ref: apiId() }),
    );
    expect(routes.map((route) => route.Properties!.RouteKey).sort()).toEqual(['$connect', '$default', '$disconnect']);
    const [functionId] = functionResource(workers, socket);
    const integrations = Object.values(workers.findResources('AWS::ApiGatewayV2::Integration') as Record<string, CfnResource>).filter(
      (integration) => JSON.stringify(integration.Properties!.ApiId) === JSON.stringify({ Ref: apiId() }),
    );
    expect(integrations).toHaveLength(1);
    expect(JSON.stringify(integrations[0]!.Properties!.IntegrationUri)).toContain(functionId);
    expect(integrations[0]!.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY' });
  });

  it('feeds the live fan-out from the table stream on its OWN event source mapping, with the outbox filter', () => {
    expect(fanOut).toMatchObject({ kind: 'stream', filter: OUTBOX_STREAM_FILTER });
    const names = dataExportNames(synthesized.data.stackName);
    const mappings = Object.values(workers.findResources('AWS::Lambda::EventSourceMapping') as Record<string, CfnResource>).filter(
      (mapping) => JSON.stringify(mapping.Properties!.EventSourceArn) === JSON.stringify({ 'Fn::ImportValue': names.tableStreamArn }),
    );
    // One per stream consumer: the webhook fan-out's and the live fan-out's, apart.
    expect(mappings).toHaveLength(2);
    const [functionId] = functionResource(workers, fanOut);
    const [failuresId] = findByLogicalIdPrefix(workers, 'AWS::SQS::Queue', 'LiveFanoutStreamFailures');
    workers.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: functionId },
      EventSourceArn: { 'Fn::ImportValue': names.tableStreamArn },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: STREAM_BATCH_SIZE,
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify(OUTBOX_STREAM_FILTER) }] },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: STREAM_RETRY_ATTEMPTS,
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [failuresId, 'Arn'] } } },
    });
  });

  it("grants execute-api:ManageConnections on this API's stage connections only, to the socket function, the fan-out and the sweep, and to no other function", () => {
    expect(sweep).toMatchObject({ kind: 'schedule', everyMinutes: 1 });
    for (const definition of [socket, fanOut, sweep]) {
      const manage = statementsOf(definition).filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('execute-api:')),
      );
      expect(manage).toHaveLength(1);
      expect(actionsOf(manage[0]!)).toEqual(['execute-api:ManageConnections']);
      const [resource] = resourcesOf(manage[0]!);
      expect(resourcesOf(manage[0]!)).toHaveLength(1);
      const text = JSON.stringify(resource);
      expect(text).toContain(apiId());
      expect(text).toContain(`/${LIVE_STAGE}/POST/@connections/*`);
      expect(variablesOf(synthesized, definition)[ENV.liveManagementUrl]).toBeDefined();
    }
    for (const definition of FUNCTIONS.filter((each) => each !== socket && each !== fanOut && each !== sweep)) {
      expect(allowedActions(statementsOf(definition), 'execute-api'), definition.name).toEqual([]);
    }
  });

  it('hands the ticket function the deployed wss:// URL through LIVE_URL (exported by the workers stack), and no connection management', () => {
    const names = workersExportNames(synthesized.workers.stackName);
    expect(variablesOf(synthesized, tickets)[ENV.liveUrl]).toEqual({ 'Fn::ImportValue': names.liveUrl });
    const outputs = workers.findOutputs('*', { Export: { Name: names.liveUrl } });
    const [output] = Object.values(outputs);
    expect(JSON.stringify(output!.Value)).toContain('wss://');
    expect(variablesOf(synthesized, tickets)[ENV.liveManagementUrl]).toBeUndefined();
  });

  it("runs the live sweep every minute from its own rule (a dead credential's connections close though no event comes)", () => {
    const [functionId] = functionResource(workers, sweep);
    const rules = Object.values(workers.findResources('AWS::Events::Rule') as Record<string, CfnResource>).filter((rule) =>
      JSON.stringify(rule.Properties!.Targets).includes(functionId),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]!.Properties).toMatchObject({ ScheduleExpression: 'rate(1 minute)', State: 'ENABLED' });
  });

  it("alarms on the WebSocket API's errors, the fan-out's lag, and both functions' errors, beside the other alarms (the one topic)", () => {
    const stackName = synthesized.workers.stackName;
    const alarms = alarmsOf(workers);
    const names = alarms.map((alarm) => alarm.AlarmName);
    for (const name of ['live-socket-errors', 'live-fanout-iterator-age', 'function-live-fanout-errors', 'function-live-socket-errors'])
      expect(names).toContain(`${stackName}-${name}`);
    const errors = alarms.find((alarm) => alarm.AlarmName === `${stackName}-live-socket-errors`)!;
    const metrics = JSON.stringify(errors.Metrics);
    expect(metrics).toContain('ExecutionError');
    expect(metrics).toContain('IntegrationError');
    expect(metrics).toContain(apiId());
    const topic = findByLogicalIdPrefix(workers, 'AWS::SNS::Topic', 'AlarmTopic')[0];
    expect(errors.AlarmActions).toEqual([{ Ref: topic }]);
    const lag = alarms.find((alarm) => alarm.AlarmName === `${stackName}-live-fanout-iterator-age`)!;
    expect(lag).toMatchObject({ MetricName: 'IteratorAge', Namespace: 'AWS/Lambda', Statistic: 'Maximum' });
  });
});
