import { Aws, CfnOutput, Duration, Fn, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachePolicy,
  CacheHeaderBehavior,
  CacheQueryStringBehavior,
  CacheCookieBehavior,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { appUrlSettingItem } from '../../shared/db/app-url-setting.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/http/viewer-address.js';
import {
  CACHE_EMBED,
  CACHE_HASHED,
  CACHE_REVALIDATE,
  EMBED_CACHE_SECONDS,
  EMBED_PREFIX,
  FILE_PATH_PATTERN,
  webSecurityHeaders,
} from '../../shared/http/web-app.js';
import { ensureWebBuilt } from '../../web/build.js';
import type { ApiStack } from './api-stack.js';
import type { DataStack } from './data-stack.js';
import type { WorkersStack } from './workers-stack.js';

/** The id CDK gives the singleton function behind every AwsCustomResource of a stack. */
const AWS_CUSTOM_RESOURCE_HANDLER_ID = 'AWS679f53fac002430cb0da5b7982bd2287';

export interface WebStackProps extends StackProps {
  /** The HTTP API the distribution's `/api/*` behaviour forwards to. */
  readonly api: ApiStack;
  /** Owner of the upload bucket: its origin is where presigned uploads go and file URLs point (the CSP allows it). */
  readonly data: DataStack;
  /** Owner of the live-update WebSocket API: its wss:// origin is where the app's socket goes (the CSP allows it). */
  readonly workers?: WorkersStack;
  /** Context `appUrl`: the app's origin when it is not the distribution's (a custom domain in front of it). */
  readonly appUrl?: string;
  /** Where the built app is (default: web/dist, built now if its sources changed). */
  readonly webDist?: string;
}

/**
 * The one origin people use (DESIGN.md "The review app… (public contracts)"): a CloudFront
 * distribution whose `/api/*` behaviour is the HTTP API (never cached, every method, every viewer
 * header but Host, so Authorization and the version header reach the functions; the viewer's
 * address in X-Viewer-Address, trusted for its X-Origin-Verify origin header) and whose other
 * paths are the review app's files from a private bucket (origin access control). A CloudFront
 * Function answers app paths (no file extension) with /index.html; every file carries the security
 * headers of `shared/http/web-app.ts`, the set the local gateway sends too. Hashed assets are
 * cached a year, index.html is revalidated on every load.
 */
export class WebStack extends Stack {
  readonly bucket: Bucket;
  readonly distribution: Distribution;
  /** `https://<distribution domain>`: the app's origin unless context `appUrl` names another. */
  readonly distributionUrl: string;
  /** What `markupUrl` and emails link to: context `appUrl`, else the distribution's origin. */
  readonly appUrl: string;

  constructor(scope: Construct, id: string, props: WebStackProps) {
    super(scope, id, props);
    const dist = props.webDist ?? ensureWebBuilt();

    this.bucket = new Bucket(this, 'AppBucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Holds only the built app (public content, the same for everyone), read by CloudFront alone through origin access control; deploys are in CloudTrail. Server access logs would record nothing worth keeping.',
    });

    // Virtual-hosted, regional: the form of the URLs the SDK presigns for the upload bucket.
    const resources = props.data.importResources(this);
    const storageOrigin = `https://${resources.bucket.bucketName}.s3.${Aws.REGION}.${Aws.URL_SUFFIX}`;
    // The live-update socket's origin: the host of the WebSocket stage URL (wss://HOST/STAGE).
    const liveOrigin = props.workers ? `wss://${Fn.select(2, Fn.split('/', props.workers.importLiveUrl(this)))}` : undefined;
    const headers = webSecurityHeaders(storageOrigin, liveOrigin);
    const securityHeaders = new ResponseHeadersPolicy(this, 'AppSecurityHeaders', {
      comment: 'Review app: strict CSP and the other security headers (shared/http/web-app.ts)',
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: headers.contentSecurityPolicy, override: true },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: HeadersFrameOption[headers.frameOptions], override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(headers.strictTransportSecurity.maxAgeSeconds),
          includeSubdomains: headers.strictTransportSecurity.includeSubdomains,
          override: true,
        },
      },
      customHeadersBehavior: {
        customHeaders: Object.entries(headers.custom).map(([header, value]) => ({ header, value, override: true })),
      },
    });

    const appPaths = new CloudFrontFunction(this, 'AppPathRewrite', {
      comment: 'Review app: a path without a file extension is an app path, answered with /index.html',
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(
        [
          'function handler(event) {',
          '  var request = event.request;',
          `  if (!${FILE_PATH_PATTERN.toString()}.test(request.uri)) request.uri = '/index.html';`,
          '  return request;',
          '}',
        ].join('\n'),
      ),
    });

    // The embeddable client: customers' pages import it as a module from their own origins (a CORS
    // fetch), so any origin may read it; it is not the app, so no rewrite and no app CSP.
    const embedHeaders = new ResponseHeadersPolicy(this, 'EmbedHeaders', {
      comment: 'Embeddable client: readable from any origin (module scripts are fetched with CORS)',
      corsBehavior: {
        accessControlAllowOrigins: ['*'],
        accessControlAllowMethods: ['GET', 'HEAD'],
        accessControlAllowHeaders: ['*'],
        accessControlAllowCredentials: false,
        originOverride: true,
      },
      securityHeadersBehavior: {
        contentTypeOptions: { override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(headers.strictTransportSecurity.maxAgeSeconds),
          includeSubdomains: headers.strictTransportSecurity.includeSubdomains,
          override: true,
        },
      },
      customHeadersBehavior: { customHeaders: [{ header: 'Cross-Origin-Resource-Policy', value: 'cross-origin', override: true }] },
    });
    // Cached at the edge as long as browsers may (five minutes), so a deploy reaches every page in that time.
    const embedCache = new CachePolicy(this, 'EmbedCache', {
      comment: 'Embeddable client: five minutes, one copy whatever the request',
      defaultTtl: Duration.seconds(EMBED_CACHE_SECONDS),
      maxTtl: Duration.seconds(EMBED_CACHE_SECONDS),
      minTtl: Duration.seconds(0),
      headerBehavior: CacheHeaderBehavior.none(),
      queryStringBehavior: CacheQueryStringBehavior.none(),
      cookieBehavior: CacheCookieBehavior.none(),
      enableAcceptEncodingGzip: true,
      enableAcceptEncodingBrotli: true,
    });

    // One origin (one origin access control) for the app's files and the embed script.
    const appOrigin = S3BucketOrigin.withOriginAccessControl(this.bucket);

    // API Gateway sees a CloudFront edge address as every request's source, one that many viewers
    // share: the function names the viewer's own address, replacing whatever the viewer sent under
    // that name, and the origin header below proves to the API that the request came this way.
    const viewerAddress = new CloudFrontFunction(this, 'ApiViewerAddress', {
      comment: `API: ${VIEWER_ADDRESS_HEADER} is the viewer's address, for the per-IP sign-in limit (shared/http/viewer-address.ts)`,
      runtime: FunctionRuntime.JS_2_0,
      code: FunctionCode.fromInline(
        [
          'function handler(event) {',
          `  event.request.headers['${VIEWER_ADDRESS_HEADER.toLowerCase()}'] = { value: event.viewer.ip };`,
          '  return event.request;',
          '}',
        ].join('\n'),
      ),
    });

    // The API's origin: its execute-api host, without the scheme.
    const apiDomain = `${props.api.httpApi.apiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`;
    this.distribution = new Distribution(this, 'Distribution', {
      comment: `Review Board Service (${this.stackName}): the review app and /api/*`,
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: appOrigin,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: securityHeaders,
        compress: true,
        functionAssociations: [{ function: appPaths, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors: {
        [`${EMBED_PREFIX}*`]: {
          origin: appOrigin,
          viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
          cachePolicy: embedCache,
          responseHeadersPolicy: embedHeaders,
          compress: true,
        },
        '/api/*': {
          origin: new HttpOrigin(apiDomain, {
            protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
            // The API stack's generated secret, as a dynamic reference CloudFormation resolves: CloudFront
            // replaces a viewer's header of this name, and the functions trust X-Viewer-Address only with it.
            customHeaders: { [ORIGIN_VERIFY_HEADER]: props.api.originVerify.secretValue.unsafeUnwrap() },
          }),
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: CachePolicy.CACHING_DISABLED,
          // Every viewer header (Authorization, Service-API-Version, Idempotency-Key, If-Match, Origin…),
          // cookie and query string, but Host: API Gateway routes on its own host name.
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
          compress: true,
          functionAssociations: [{ function: viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }],
        },
      },
    });
    this.distributionUrl = `https://${this.distribution.distributionDomainName}`;
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: 'Reviewers and customers are anywhere: no geographic restriction.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF web ACL by default: the API authenticates every request and API Gateway throttles per stage; an account that wants WAF attaches its own ACL.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason: 'The static files are the same public build for everyone; every API request is logged in the HTTP API stage access logs.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'Without a custom domain the distribution uses the default *.cloudfront.net certificate, whose minimum protocol CloudFront fixes; a custom domain sets TLSv1.2_2021.',
      },
    );

    // Hashed files first (cached a year; never pruned, so a page loaded before a deploy keeps its
    // script), then index.html (revalidated each load), whose edge copy is invalidated.
    const assets = new BucketDeployment(this, 'AppAssets', {
      sources: [Source.asset(dist, { exclude: ['index.html', 'favicon.svg', '.build-digest', 'embed', 'embed/*', 'embed/**'] })],
      destinationBucket: this.bucket,
      prune: false,
      cacheControl: [CacheControl.fromString(CACHE_HASHED)],
      memoryLimit: 256,
    });
    const index = new BucketDeployment(this, 'AppIndex', {
      sources: [Source.asset(dist, { exclude: ['*', '!index.html', '!favicon.svg'] })],
      destinationBucket: this.bucket,
      prune: false,
      cacheControl: [CacheControl.fromString(CACHE_REVALIDATE)],
      distribution: this.distribution,
      distributionPaths: ['/index.html'],
      memoryLimit: 256,
    });
    index.node.addDependency(assets);
    // The embed script keeps its name across deploys: cached five minutes, its edge copy invalidated.
    const embed = new BucketDeployment(this, 'EmbedScript', {
      sources: [Source.asset(dist, { exclude: ['*', '.build-digest', '!embed', '!embed/**'] })],
      destinationBucket: this.bucket,
      prune: false,
      cacheControl: [CacheControl.fromString(CACHE_EMBED)],
      distribution: this.distribution,
      distributionPaths: [`${EMBED_PREFIX}*`],
      memoryLimit: 256,
    });
    embed.node.addDependency(index);
    this.acknowledgeDeploymentHandler();

    this.appUrl = props.appUrl ?? this.distributionUrl;
    this.publishAppUrl(resources.table.tableName);

    new CfnOutput(this, 'DistributionUrl', {
      value: this.distributionUrl,
      description: 'The review app and API origin (the API is /api/v2 under it)',
    });
    new CfnOutput(this, 'AppUrl', { value: this.appUrl, description: 'What markupUrl and emails link to' });
  }

  /**
   * Tells the functions the app's origin. They cannot have it in their environment: the
   * distribution needs the API first (its `/api/*` origin), so a reference back from the API's
   * functions would be a cycle between the stacks. The origin is written into the table at deploy
   * time instead (`CONFIG`/`APP_URL`, shared/db/app-url-setting.ts) and each function reads it once
   * per cold start (`APP_URL_FROM_TABLE`). Unlike the forwarded Host header, nothing a caller sends
   * can change where invitation emails and `markupUrl` point.
   */
  private publishAppUrl(tableName: string): void {
    const tableArn = Stack.of(this).formatArn({ service: 'dynamodb', resource: 'table', resourceName: tableName });
    const item = Object.fromEntries(Object.entries(appUrlSettingItem(this.appUrl)).map(([name, value]) => [name, { S: value }]));
    const put = {
      service: 'DynamoDB',
      action: 'putItem',
      parameters: { TableName: tableName, Item: item },
      physicalResourceId: PhysicalResourceId.of('app-url-setting'),
    };
    const writer = new AwsCustomResource(this, 'AppUrlSetting', {
      onCreate: put,
      onUpdate: put,
      policy: AwsCustomResourcePolicy.fromStatements([new PolicyStatement({ actions: ['dynamodb:PutItem'], resources: [tableArn] })]),
      installLatestAwsSdk: false,
    });
    writer.node.addDependency(this.distribution);
    const handler = this.node.tryFindChild(AWS_CUSTOM_RESOURCE_HANDLER_ID);
    if (handler) {
      Validations.of(handler).acknowledge(
        {
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
          reason:
            'CDK-provided, deploy-time handler of the app URL setting (one PutItem on the table); the managed policy only lets it write its own logs.',
        },
        {
          id: 'AwsSolutions-L1',
          reason: 'CDK-provided, deploy-time handler of AwsCustomResource: CDK pins its runtime and upgrades it with aws-cdk-lib.',
        },
      );
    }
  }

  /**
   * The singleton function CDK provides behind BucketDeployment runs at deploy time only, copying
   * the built files from the CDK asset bucket into the app bucket and invalidating index.html.
   */
  private acknowledgeDeploymentHandler(): void {
    const handler = this.node.children.find((child) => child.node.id.startsWith('Custom::CDKBucketDeployment'));
    if (!handler) return;
    const deployTime =
      'CDK-provided, deploy-time handler of BucketDeployment (copies the built app from the CDK asset bucket into the app bucket, invalidates index.html)';
    Validations.of(handler).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: `${deployTime}; the managed policy only lets it write its own logs.`,
      },
      {
        id: 'AwsSolutions-L1',
        reason: `${deployTime}: CDK pins its runtime (a Python runtime with the AWS CLI layer) and upgrades it with aws-cdk-lib.`,
      },
      ...['Action::s3:Abort*', 'Action::s3:DeleteObject*', 'Action::s3:GetBucket*', 'Action::s3:GetObject*', 'Action::s3:List*'].map(
        (finding) => ({
          id: `AwsSolutions-IAM5[${finding}]`,
          reason: `${deployTime}: CDK's grantRead/grantReadWrite action groups, on the asset bucket and the app bucket only.`,
        }),
      ),
      { id: 'AwsSolutions-IAM5[Resource::<AppBucket20FEBF1C.Arn>/*]', reason: `${deployTime}: it writes every object of the app bucket.` },
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]',
        reason: `${deployTime}: it reads the uploaded build from the CDK bootstrap asset bucket.`,
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: `${deployTime}: cloudfront:CreateInvalidation and GetInvalidation have no resource-level scoping CDK applies here.`,
      },
    );
  }
}
