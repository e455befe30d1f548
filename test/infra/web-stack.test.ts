import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { CACHE_EMBED, CACHE_HASHED, CACHE_REVALIDATE, EMBED_CACHE_SECONDS, webSecurityHeaders } from '../../shared/http/web-app.js';
import { synthesizeApp, withStagedAssembly, type CfnResource, type SynthesizedApp } from './synth-app.js';

/**
 * Issue 30 part 1 (Serving), deployed: one CloudFront distribution, `/api/*` to the HTTP API and
 * everything else from a private bucket through origin access control, app paths rewritten to
 * /index.html, the security headers of shared/http/web-app.ts, and the app's origin handed to the
 * functions through the table (no cycle between the API and web stacks).
 */
let built: SynthesizedApp;
let resources: Record<string, CfnResource>;
const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
const only = (type: string) => {
  const found = ofType(type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
};

/** The CloudFront Function whose logical id starts with `prefix` (the app-path rewrite, the API's viewer address). */
const cloudFrontFunction = (prefix: string) => {
  const found = ofType('AWS::CloudFront::Function').filter(([id]) => id.startsWith(prefix));
  expect(found, prefix).toHaveLength(1);
  return found[0]!;
};
/** A CloudFront Function's code, run as it would run at the edge. */
const handlerOf = (fn: CfnResource) =>
  new Function(`${fn.Properties!.FunctionCode as string}\nreturn handler;`)() as (event: unknown) => any;

/** A CloudFormation value with its intrinsic functions flattened to text, for matching. */
const flat = (value: unknown): string => JSON.stringify(value);
/** The one resource of `type` whose logical id starts with `prefix`. */
const named = (type: string, prefix: string) => {
  const found = ofType(type).filter(([id]) => id.startsWith(prefix));
  expect(found, `${type} ${prefix}`).toHaveLength(1);
  return found[0]!;
};

const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

beforeAll(() => {
  built = synthesizeApp();
  resources = built.templates.web.toJSON().Resources as Record<string, CfnResource>;
});

describe('web stack: one distribution for the review app and the API', () => {
  it('has one distribution with two origins: the app bucket through OAC, and the HTTP API over HTTPS', () => {
    const [, distribution] = only('AWS::CloudFront::Distribution');
    const [bucketId] = only('AWS::S3::Bucket');
    const [oacId, oac] = only('AWS::CloudFront::OriginAccessControl');
    const origins = distribution.Properties!.DistributionConfig.Origins as Record<string, any>[];

    expect(origins).toHaveLength(2);
    const s3 = origins.find((origin) => origin.S3OriginConfig)!;
    expect(s3.DomainName).toEqual({ 'Fn::GetAtt': [bucketId, 'RegionalDomainName'] });
    expect(s3.OriginAccessControlId).toEqual({ 'Fn::GetAtt': [oacId, 'Id'] });
    expect(s3.S3OriginConfig.OriginAccessIdentity).toBe('');
    expect(oac.Properties!.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
    const api = origins.find((origin) => origin.CustomOriginConfig)!;
    expect(api.CustomOriginConfig.OriginProtocolPolicy).toBe('https-only');
    expect(flat(api.DomainName)).toContain('.execute-api.');
    expect(flat(api.DomainName)).toContain(built.api.stackName);
  });

  it('sends /api/* to the API uncached, every method, every viewer header but Host', () => {
    const [, distribution] = only('AWS::CloudFront::Distribution');
    const config = distribution.Properties!.DistributionConfig;
    const apiOrigin = (config.Origins as Record<string, any>[]).find((origin) => origin.CustomOriginConfig)!;

    const api = (config.CacheBehaviors as Record<string, any>[]).find((behavior) => behavior.PathPattern === '/api/*')!;
    expect(config.CacheBehaviors).toHaveLength(2);
    expect(api).toMatchObject({
      PathPattern: '/api/*',
      TargetOriginId: apiOrigin.Id,
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
      ViewerProtocolPolicy: 'https-only',
    });
    expect([...api.AllowedMethods].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT']);
    expect(api.ResponseHeadersPolicyId).toBeUndefined();
  });

  it("names the viewer's address to the API (X-Viewer-Address, set at the edge over whatever the viewer sent) and proves the request came through the distribution (X-Origin-Verify)", () => {
    const [, distribution] = only('AWS::CloudFront::Distribution');
    const config = distribution.Properties!.DistributionConfig;
    const [functionId, fn] = cloudFrontFunction('ApiViewerAddress');
    const apiOrigin = (config.Origins as Record<string, any>[]).find((origin) => origin.CustomOriginConfig)!;

    // Every viewer header but Host reaches the API, the ones the viewer-request function set among them.
    const apiBehavior = (config.CacheBehaviors as Record<string, any>[]).find((behavior) => behavior.PathPattern === '/api/*')!;
    expect(apiBehavior.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [functionId, 'FunctionARN'] } },
    ]);
    expect(apiBehavior.OriginRequestPolicyId).toBe(ALL_VIEWER_EXCEPT_HOST_HEADER);
    expect(fn.Properties!.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    const request = handlerOf(fn)({
      viewer: { ip: '203.0.113.7' },
      request: { uri: '/api/v2/auth/email-sign-in', headers: { 'x-viewer-address': { value: '10.0.0.1' } } },
    });
    expect(request.headers['x-viewer-address']).toEqual({ value: '203.0.113.7' });
    expect(request.uri).toBe('/api/v2/auth/email-sign-in');

    // The proof: the API stack's generated secret, resolved by CloudFormation; no value in the template.
    const secretId = Object.keys(built.templates.api.findResources('AWS::SecretsManager::Secret'))[0]!;
    const secret = built.templates.api.toJSON().Resources[secretId];
    expect(secret.Properties.GenerateSecretString).toMatchObject({ PasswordLength: 48, ExcludePunctuation: true });
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(apiOrigin.OriginCustomHeaders).toHaveLength(1);
    const [header] = apiOrigin.OriginCustomHeaders;
    expect(header.HeaderName).toBe('X-Origin-Verify');
    // `{{resolve:secretsmanager:<the API stack's secret>:SecretString:::}}`, its ARN taken from the API stack.
    const [prefix, reference, suffix] = header.HeaderValue['Fn::Join'][1];
    expect([prefix, suffix]).toEqual(['{{resolve:secretsmanager:', ':SecretString:::}}']);
    expect(typeof reference).toBe('object');
    expect(flat(reference)).toContain(built.api.stackName);
    expect(flat(reference)).toContain('OriginVerify');
  });

  it('serves everything else from the bucket over HTTPS with the security headers and the app-path rewrite', () => {
    const [, distribution] = only('AWS::CloudFront::Distribution');
    const [functionId] = cloudFrontFunction('AppPathRewrite');
    const [policyId] = named('AWS::CloudFront::ResponseHeadersPolicy', 'AppSecurityHeaders');
    const behavior = distribution.Properties!.DistributionConfig.DefaultCacheBehavior;

    expect(behavior.ViewerProtocolPolicy).toBe('redirect-to-https');
    expect(behavior.AllowedMethods).toEqual(['GET', 'HEAD', 'OPTIONS']);
    expect(behavior.ResponseHeadersPolicyId).toEqual({ Ref: policyId });
    expect(behavior.FunctionAssociations).toEqual([
      { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': [functionId, 'FunctionARN'] } },
    ]);
  });

  it('keeps the bucket private: all public access blocked, TLS enforced, read only by this distribution', () => {
    const [bucketId, bucket] = only('AWS::S3::Bucket');
    const [, policy] = only('AWS::S3::BucketPolicy');
    const [distributionId] = only('AWS::CloudFront::Distribution');
    const statements = policy.Properties!.PolicyDocument.Statement as Record<string, any>[];

    expect(bucket.Properties!.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(policy.Properties!.Bucket).toEqual({ Ref: bucketId });
    expect(statements).toContainEqual(expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }));
    const allows = statements.filter((statement) => statement.Effect === 'Allow');
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    expect(flat(allows[0]!.Condition)).toContain(distributionId);
  });

  it('sends the same security headers as the local gateway, a strict CSP that allows the upload bucket', () => {
    const [, policy] = named('AWS::CloudFront::ResponseHeadersPolicy', 'AppSecurityHeaders');
    const config = policy.Properties!.ResponseHeadersPolicyConfig;
    const expected = webSecurityHeaders('https://bucket.s3.region.amazonaws.com');
    const csp = flat(config.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy);

    expect(csp).toContain("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self' https://");
    expect(csp).toContain("frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
    expect(csp).toContain(built.data.stackName);
    // The live-update socket (the workers stack's WebSocket API, another origin): its wss:// host, imported.
    expect(csp).toMatch(/connect-src 'self' https:\/\/[^;]* wss:\/\//);
    expect(csp).toContain(`${built.workers.stackName}:LiveUrl`);
    expect(csp).not.toMatch(/unsafe-/);
    expect(config.SecurityHeadersConfig).toMatchObject({
      ContentTypeOptions: { Override: true },
      FrameOptions: { FrameOption: expected.frameOptions, Override: true },
      ReferrerPolicy: { ReferrerPolicy: expected.referrerPolicy, Override: true },
      StrictTransportSecurity: {
        AccessControlMaxAgeSec: expected.strictTransportSecurity.maxAgeSeconds,
        IncludeSubdomains: true,
        Override: true,
      },
    });
    expect(config.CustomHeadersConfig.Items).toEqual(
      Object.entries(expected.custom).map(([Header, Value]) => ({ Header, Value, Override: true })),
    );
  });

  it('rewrites app paths (no file extension) to /index.html and leaves files alone', () => {
    const [, fn] = cloudFrontFunction('AppPathRewrite');
    expect(fn.Properties!.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    const handler = handlerOf(fn);
    const rewrite = (uri: string) => handler({ request: { uri, headers: {} } }).uri;

    expect(rewrite('/markups/0b8ad1f2-52a4-4d63-bd3c-4f3d2d9e0d11')).toBe('/index.html');
    expect(rewrite('/sign-in')).toBe('/index.html');
    expect(rewrite('/')).toBe('/index.html');
    expect(rewrite('/assets/main-7BMMYUKV.js')).toBe('/assets/main-7BMMYUKV.js');
    expect(rewrite('/assets/missing.css')).toBe('/assets/missing.css');
  });

  it('deploys the built files: hashed assets cached a year and never pruned, then index.html revalidated and invalidated', () => {
    const deployments = ofType('Custom::CDKBucketDeployment');
    expect(deployments).toHaveLength(3);
    const [assets, index] = [
      deployments.find(([id]) => id.startsWith('AppAssets'))!,
      deployments.find(([id]) => id.startsWith('AppIndex'))!,
    ];

    expect(assets[1].Properties).toMatchObject({ Prune: false, SystemMetadata: { 'cache-control': CACHE_HASHED } });
    expect(index[1].Properties).toMatchObject({
      Prune: false,
      SystemMetadata: { 'cache-control': CACHE_REVALIDATE },
      DistributionPaths: ['/index.html'],
    });
    expect(index[1].DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^AppAssets/)]));
  });
});

describe('web stack: the embeddable client (issue 31)', () => {
  it('serves /embed/* from the bucket without the app-path rewrite, readable from any origin, cached five minutes at the edge', () => {
    const [, distribution] = only('AWS::CloudFront::Distribution');
    const config = distribution.Properties!.DistributionConfig;
    const s3 = (config.Origins as Record<string, any>[]).find((origin) => origin.S3OriginConfig)!;
    const embed = (config.CacheBehaviors as Record<string, any>[]).find((behavior) => behavior.PathPattern === '/embed/*')!;
    const [policyId, policy] = named('AWS::CloudFront::ResponseHeadersPolicy', 'EmbedHeaders');
    const [cacheId, cache] = named('AWS::CloudFront::CachePolicy', 'EmbedCache');

    expect(embed).toMatchObject({
      TargetOriginId: s3.Id,
      ViewerProtocolPolicy: 'redirect-to-https',
      Compress: true,
      ResponseHeadersPolicyId: { Ref: policyId },
      CachePolicyId: { Ref: cacheId },
    });
    expect(embed.AllowedMethods).toEqual(['GET', 'HEAD', 'OPTIONS']);
    // No CloudFront Function: a missing embed file is a 404, never the app's index.html.
    expect(embed.FunctionAssociations).toBeUndefined();
    const headers = policy.Properties!.ResponseHeadersPolicyConfig;
    expect(headers.CorsConfig).toMatchObject({
      AccessControlAllowOrigins: { Items: ['*'] },
      AccessControlAllowMethods: { Items: ['GET', 'HEAD'] },
      AccessControlAllowCredentials: false,
      OriginOverride: true,
    });
    expect(headers.SecurityHeadersConfig.ContentTypeOptions).toEqual({ Override: true });
    expect(headers.CustomHeadersConfig.Items).toEqual([{ Header: 'Cross-Origin-Resource-Policy', Value: 'cross-origin', Override: true }]);
    expect(cache.Properties!.CachePolicyConfig).toMatchObject({ DefaultTTL: EMBED_CACHE_SECONDS, MaxTTL: EMBED_CACHE_SECONDS, MinTTL: 0 });
  });

  it('deploys the embed script on its own, cached five minutes and invalidated at the edge, not as a year-long hashed asset', () => {
    const deployments = ofType('Custom::CDKBucketDeployment');
    const [, embed] = deployments.find(([id]) => id.startsWith('EmbedScript'))!;
    expect(embed.Properties).toMatchObject({
      Prune: false,
      SystemMetadata: { 'cache-control': CACHE_EMBED },
      DistributionPaths: ['/embed/*'],
    });
  });

  it('ships the embed script in its own deployment only, and the hashed assets without it', () => {
    const [embedFiles, appFiles] = withStagedAssembly((directory, staged) => {
      const deployments = Object.entries(Template.fromStack(staged.web).findResources('Custom::CDKBucketDeployment'));
      const filesOf = (prefix: string): string[] => {
        const [, deployment] = deployments.find(([id]) => id.startsWith(prefix))!;
        const hash = /([0-9a-f]{64})\.zip/.exec(flat(deployment.Properties!.SourceObjectKeys))![1]!;
        return readdirSync(join(directory, `asset.${hash}`), { recursive: true, withFileTypes: true })
          .filter((entry) => entry.isFile())
          .map((entry) =>
            relative(join(directory, `asset.${hash}`), join(entry.parentPath, entry.name))
              .split(sep)
              .join('/'),
          );
      };
      return [filesOf('EmbedScript'), filesOf('AppAssets')];
    });
    expect(embedFiles).toEqual(['embed/v1/review-board.js']);
    expect(appFiles.length).toBeGreaterThan(0);
    expect(appFiles.every((file) => file.startsWith('assets/'))).toBe(true);
  });
});

describe('the app URL reaches the functions without a cycle between the stacks', () => {
  it('writes the distribution origin into the table at deploy time, and every function reads it from there', () => {
    const [, writer] = only('Custom::AWS');
    const create = flat(writer.Properties!.Create);
    const [distributionId] = only('AWS::CloudFront::Distribution');

    expect(create).toContain('"action\\":\\"putItem\\"');
    expect(create).toContain('\\"PK\\":{\\"S\\":\\"CONFIG\\"},\\"SK\\":{\\"S\\":\\"APP_URL\\"}');
    expect(create).toContain(distributionId);
    // The API's functions (markupUrl, invitation emails) and the workers (webhook bodies) alike.
    const functions = [built.templates.api, built.templates.workers].flatMap((template) =>
      Object.entries(template.findResources('AWS::Lambda::Function')),
    );
    const ours = functions.filter(([, fn]) => (fn as CfnResource).Properties?.Environment?.Variables?.STACK_MODE);
    expect(ours.length).toBeGreaterThan(10);
    for (const [id, fn] of ours) {
      const variables = (fn as CfnResource).Properties!.Environment.Variables;
      expect(variables.APP_URL_FROM_TABLE, id).toBe('1');
      expect(variables.APP_URL, id).toBeUndefined();
    }
  });

  it('with context appUrl, the functions link to it directly and the table holds it too', () => {
    const withDomain = synthesizeApp({ appUrl: 'https://review.example.com' });
    const functions = Object.values(withDomain.templates.api.findResources('AWS::Lambda::Function')) as CfnResource[];
    const ours = functions.filter((fn) => fn.Properties?.Environment?.Variables?.STACK_MODE);

    expect(ours.length).toBeGreaterThan(0);
    for (const fn of ours) expect(fn.Properties!.Environment.Variables).toMatchObject({ APP_URL: 'https://review.example.com' });
    expect(flat(Object.values(withDomain.templates.web.findResources('Custom::AWS'))[0])).toContain('https://review.example.com');
  });

  it('deploys after the API stack, which knows nothing of it', () => {
    expect(built.web.dependencies).toContain(built.api);
    expect(built.api.dependencies).not.toContain(built.web);
  });
});
