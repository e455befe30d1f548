import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpRoute, HttpRouteKey, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { PREFLIGHT_PATH } from '../../shared/http/cors.js';
import { FUNCTIONS, isApiFunction, type FunctionDefinition } from '../../functions/registry.js';
import { ServiceDashboard } from '../constructs/dashboard.js';
import { ServiceAlarms } from '../constructs/monitoring.js';
import { pascalCase, ServiceFunction } from '../constructs/service-function.js';
import { ENV } from '../../shared/config.js';
import type { DataStack } from './data-stack.js';
import type { WorkersStack } from './workers-stack.js';

export interface ApiStackProps extends StackProps {
  /** Where the table, bucket and queues live; they are imported by export name. */
  readonly data: DataStack;
  /** Owner of the alarm topic, and of the worker functions the dashboard shows; imported by export name. */
  readonly workers: WorkersStack;
  /** Name of the service's dashboard (API, workers, queues, table). @default the stack name */
  readonly dashboardName?: string;
  /** Namespace of the service's own metrics, for the dashboard's conversion graph (context `metricsNamespace`). */
  readonly metricsNamespace: string;
  /** @default the registry's `api` functions */
  readonly functions?: readonly FunctionDefinition[];
  /** Default stage throttling. @default { rateLimit: 100, burstLimit: 200 } */
  readonly throttle?: { rateLimit: number; burstLimit: number };
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error';
  readonly appUrl?: string;
  /** The identity provider the auth function verifies SDK sign-ins against (IDP_* variables). */
  readonly identityProvider?: { jwksUrl: string; issuer: string; audience: string };
  /** The From address of invitation emails (a verified SES identity). */
  readonly emailSender?: string;
  readonly tracing?: boolean;
}

/**
 * The HTTP API: one Lambda integration per route group, one route per entry of the group's route
 * table (the table is the only place a route is written), `$default` to the function marked
 * `isDefault`, and a `$default` stage with access logs and throttling. Its functions and the API
 * are watched by alarms that notify the workers stack's topic, and the service's dashboard lives here:
 * it shows both stateless stacks, so it sits in the one that deploys last.
 */
export class ApiStack extends Stack {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogGroup: LogGroup;
  readonly functions: Readonly<Record<string, ServiceFunction>>;
  readonly alarms: ServiceAlarms;
  readonly dashboard: ServiceDashboard;
  /** The value the web stack's distribution sends as `X-Origin-Verify` (shared/http/viewer-address.ts). */
  readonly originVerify: Secret;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const definitions = (props.functions ?? FUNCTIONS).filter(isApiFunction);
    const defaults = definitions.filter((definition) => definition.isDefault);
    if (defaults.length !== 1) {
      throw new Error(`Exactly one api function must take the $default route; found ${defaults.length}.`);
    }

    const resources = {
      ...props.data.importResources(this),
      exchangeKey: this.createExchangeKey(),
      liveUrl: props.workers.importLiveUrl(this),
    };
    const functions: Record<string, ServiceFunction> = {};
    const integrations = new Map<string, HttpLambdaIntegration>();
    for (const definition of definitions) {
      const fn = ServiceFunction.forDefinition(this, definition, resources, {
        logLevel: props.logLevel,
        metricsNamespace: props.metricsNamespace,
        appUrl: props.appUrl,
        emailSender: props.emailSender,
        tracing: props.tracing,
      });
      functions[definition.name] = fn;
      integrations.set(
        definition.name,
        // One invoke permission per function (any route of this API) instead of one per route: the
        // function is only integrated with its own routes, and per-route statements would outgrow
        // the 20 KB Lambda resource policy as route tables grow.
        new HttpLambdaIntegration(`${pascalCase(definition.name)}Integration`, fn, { scopePermissionToRoute: false }),
      );
    }
    this.functions = functions;
    this.originVerify = this.createOriginVerify(Object.values(functions));
    const idp = props.identityProvider;
    if (idp) {
      // Only the auth group verifies identity-provider tokens (POST /auth/sdk-exchange).
      const auth = functions.auth;
      if (!auth) throw new Error('An identity provider is configured but no auth function exists.');
      auth
        .addEnvironment(ENV.idpJwksUrl, idp.jwksUrl)
        .addEnvironment(ENV.idpIssuer, idp.issuer)
        .addEnvironment(ENV.idpAudience, idp.audience);
    }

    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: this.stackName,
      description: 'Review Board Service API',
      createDefaultStage: false,
      defaultIntegration: integrations.get(defaults[0]!.name),
      // No `corsPreflight`: API Gateway would answer every OPTIONS itself, for any origin. Preflights
      // go to the function that knows which origins installations allow (below).
    });

    const seen = new Set<string>();
    for (const definition of definitions) {
      for (const route of definition.routes) {
        const key = `${route.method} ${route.path}`;
        if (seen.has(key)) throw new Error(`Route ${key} is declared twice.`);
        seen.add(key);
        new HttpRoute(this.httpApi, `Route${route.operationId[0]!.toUpperCase()}${route.operationId.slice(1)}`, {
          httpApi: this.httpApi,
          routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
          integration: integrations.get(definition.name)!,
        });
      }
    }

    const preflight = definitions.filter((definition) => definition.answersPreflight);
    if (preflight.length !== 1) throw new Error(`Exactly one api function must answer preflights; found ${preflight.length}.`);
    new HttpRoute(this.httpApi, 'RoutePreflight', {
      httpApi: this.httpApi,
      routeKey: HttpRouteKey.with(PREFLIGHT_PATH, HttpMethod.OPTIONS),
      integration: integrations.get(preflight[0]!.name)!,
    });

    this.accessLogGroup = new LogGroup(this, 'AccessLogs', { retention: RetentionDays.ONE_MONTH });
    const throttle = props.throttle ?? { rateLimit: 100, burstLimit: 200 };
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            ip: '$context.identity.sourceIp',
            requestTime: '$context.requestTime',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            userAgent: '$context.identity.userAgent',
          }),
        ),
      },
    });

    Validations.of(this.httpApi).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Callers are authenticated in the functions (Bearer API key or exchange token, checked per route as the route table declares); some routes are public by the spec (auth config, SDK exchange, the OpenAPI document).',
    });

    const workers = props.workers.importMonitoring(this);
    this.alarms = new ServiceAlarms(this, 'Alarms', { topic: workers.alarmTopic }).watchFunctions(functions).watchHttpApi(this.httpApi);
    this.dashboard = new ServiceDashboard(this, 'Dashboard', {
      dashboardName: props.dashboardName ?? this.stackName,
      httpApi: this.httpApi,
      apiFunctions: functions,
      workerFunctions: workers.functions,
      queues: resources.queues,
      deadLetterQueues: resources.deadLetterQueues,
      table: resources.table,
      metricsNamespace: props.metricsNamespace,
    });

    new CfnOutput(this, 'ApiUrl', { value: this.httpApi.apiEndpoint, description: 'Base URL of the HTTP API' });
  }

  /**
   * The proof that a request came through the web stack's distribution, so its `X-Viewer-Address`
   * may be trusted (the per-IP sign-in limit counts viewers, not CloudFront's shared edge
   * addresses). Secrets Manager generates it at deploy time: neither the repository nor the
   * templates hold it, only dynamic references (`{{resolve:secretsmanager:…}}`) that CloudFormation
   * resolves into the functions' `ORIGIN_VERIFY` and the distribution's origin header.
   */
  private createOriginVerify(functions: readonly ServiceFunction[]): Secret {
    const secret = new Secret(this, 'OriginVerify', {
      description: 'Review Board Service: the X-Origin-Verify value the CloudFront distribution sends to the API',
      generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
    });
    for (const fn of functions) fn.addEnvironment(ENV.originVerify, secret.secretValue.unsafeUnwrap());
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'CloudFormation resolves the value into the distribution and the functions at deploy time only, so a scheduled rotation would reach neither. ' +
        'Rotate by hand (a new value, then deploy the API and web stacks); until both have it the sign-in limit counts the edge address, no request fails.',
    });
    return secret;
  }

  /**
   * The exchange-token key (DESIGN.md "Exchange tokens"): an asymmetric KMS key (ES256), so its
   * private half never leaves KMS, the auth function alone may sign with it and every other
   * function may only read its public half. Rotation is a new key (docs/embedded-commenting.md, "Exchange tokens: keys, rotation and
   * liveness").
   * Destroyed with the stack: tokens live minutes, so nothing signed with it outlives a redeploy.
   */
  private createExchangeKey(): Key {
    return new Key(this, 'ExchangeTokenKey', {
      description: 'Review Board Service: signs exchange tokens (ES256)',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
  }
}
