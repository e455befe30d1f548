import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../infra/local/gateway.js';
import { parseApiKey } from '../../shared/auth/api-key-format.js';
import { resetLogger } from '../../shared/logger.js';
import { resetMetrics } from '../../shared/metrics.js';
import { makeOrganization } from '../support/api.js';

/**
 * What a deployed function writes for one request, captured from this process: the request's log
 * line and its Embedded Metric Format line (the local stack switches metrics off; here they are on,
 * as deployed). The handler runs in-process against the real emulators.
 */
const SETTINGS = {
  LOG_LEVEL: 'info',
  POWERTOOLS_METRICS_DISABLED: 'false',
  POWERTOOLS_SERVICE_NAME: 'workspaces',
  POWERTOOLS_METRICS_NAMESPACE: 'ReviewBoardTest',
};
let saved: Record<string, string | undefined> = {};
let lines: string[] = [];
let restore: (() => void) | undefined;

beforeEach(() => {
  saved = Object.fromEntries(Object.keys(SETTINGS).map((name) => [name, process.env[name]]));
  Object.assign(process.env, SETTINGS);
  resetLogger();
  resetMetrics();
  lines = [];
  const streams = [process.stdout, process.stderr] as const;
  const originals = streams.map((stream) => stream.write.bind(stream));
  streams.forEach((stream) => {
    stream.write = ((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    }) as typeof stream.write;
  });
  restore = () => streams.forEach((stream, i) => (stream.write = originals[i]!));
});

afterEach(() => {
  restore?.();
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetLogger();
  resetMetrics();
});

function event(routeKey: string, path: string, authorization: string): APIGatewayProxyEventV2 {
  const now = new Date();
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: { authorization, host: 'localhost', 'service-api-version': '2023-02-22' },
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'local',
      http: { method: routeKey.split(' ')[0]!, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
  };
}

const parsed = () =>
  lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, any>];
    } catch {
      return [];
    }
  });

describe('observability: one log line and one EMF metric line per request, no credential in any line', () => {
  it('logs the request (request id, route, status, duration, caller, cold start) and writes its metrics', async () => {
    const org = await makeOrganization();
    const { handler } = await import('../../functions/workspaces/handler.js');
    const request = event('GET /api/v2/workspace', '/api/v2/workspace', `Bearer ${org.workspaceKey}`);

    const result = (await handler(
      request,
      lambdaContext('workspaces', request.requestContext.requestId),
    )) as APIGatewayProxyStructuredResultV2;
    const refused = event('GET /api/v2/workspace', '/api/v2/workspace', `Bearer ${org.workspaceKey.slice(0, -4)}AAAA`);
    const refusal = (await handler(
      refused,
      lambdaContext('workspaces', refused.requestContext.requestId),
    )) as APIGatewayProxyStructuredResultV2;
    restore?.();

    expect(result.statusCode).toBe(200);
    expect(refusal.statusCode).toBe(401);
    const entries = parsed();
    const requestLine = entries.find((entry) => entry.message === 'request' && entry.requestId === request.requestContext.requestId);
    expect(requestLine).toMatchObject({
      level: 'INFO',
      service: 'workspaces',
      routeKey: 'GET /api/v2/workspace',
      path: '/api/v2/workspace',
      status: 200,
      principal: 'apiKey',
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      function_name: 'workspaces',
      function_request_id: request.requestContext.requestId,
    });
    expect(requestLine!.durationMs).toBeGreaterThanOrEqual(0);
    expect(typeof requestLine!.cold_start).toBe('boolean');
    expect(entries.find((entry) => entry.message === 'request' && entry.requestId === refused.requestContext.requestId)).toMatchObject({
      status: 401,
    });

    const metricLines = entries.filter((entry) => entry._aws?.CloudWatchMetrics);
    const forRoute = metricLines.filter((entry) => entry.route === 'GET /api/v2/workspace');
    expect(forRoute).toHaveLength(2);
    expect(forRoute[0]).toMatchObject({
      _aws: {
        CloudWatchMetrics: [
          {
            Namespace: 'ReviewBoardTest',
            Dimensions: [expect.arrayContaining(['service', 'route'])],
            Metrics: expect.arrayContaining([
              { Name: 'Requests', Unit: 'Count' },
              { Name: 'Latency', Unit: 'Milliseconds' },
            ]),
          },
        ],
      },
      service: 'workspaces',
      Requests: 1,
      ClientErrors: 0,
      ServerErrors: 0,
    });
    expect(forRoute[1]).toMatchObject({ Requests: 1, ClientErrors: 1, ServerErrors: 0 });

    // The secret is base64url, so it may hold '_' itself: parse the key rather than split it.
    const { secret } = parseApiKey(org.workspaceKey)!;
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      expect(line).not.toContain(secret);
      expect(line).not.toContain(org.workspaceKey.slice(0, -4));
      expect(line).not.toMatch(/Bearer (?!\[redacted\])/);
    }
  });
});
