import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { PERMISSIONS, type PermissionRule } from '../../shared/auth/permissions.js';
import { buildOpenApi } from '../../shared/http/openapi.js';

type Operation = { security: Record<string, string[]>[] };
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, string>> };
}

// The reference page and its script are routed but not in the document (Operation.undocumented).
const routes = allRoutes().filter((route) => !route.undocumented);
const document = buildOpenApi(routes) as unknown as Document;
const operationOf = (method: string, path: string) => document.paths[path]![method.toLowerCase()]!;

describe('OpenAPI security: API keys everywhere a key is needed, exchange tokens where end users may call (issue 11)', () => {
  it('defines the exchange token as a JWT bearer scheme beside the API key, naming where it comes from', () => {
    const schemes = document.components.securitySchemes;

    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.exchangeToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(schemes.exchangeToken!.description).toContain('POST /auth/exchange');
    expect(schemes.sessionToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(schemes.sessionToken!.description).toContain('POST /auth/email-sign-in/verify');
  });

  it('offers no session token on organization-key operations, and only a session token on signing out and reading the session (issue 30)', () => {
    const schemesOf = (method: string, path: string) =>
      operationOf(method, path).security.flatMap((requirement) => Object.keys(requirement));

    expect(schemesOf('GET', '/api/v2/workspaces')).toEqual(['bearer']);
    expect(schemesOf('POST', '/api/v2/auth/sign-out')).toEqual(['sessionToken']);
    expect(schemesOf('GET', '/api/v2/auth/session')).toEqual(['sessionToken']);
    expect(schemesOf('GET', '/api/v2/markups')).toEqual(['bearer', 'sessionToken']);
  });

  it.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', (_key, route) => {
    const { security } = operationOf(route.method, route.path);

    // Issue 30: session tokens wherever a member may (not on organization-key rows); only they on rows reserved to sessions.
    const rule: PermissionRule | undefined = route.auth === 'none' ? undefined : PERMISSIONS[route.permission!];
    const sessions = rule?.organizationKey ? [] : [{ sessionToken: [] }];
    if (route.auth === 'none') expect(security).toEqual([]);
    else if (rule?.sessionOnly) expect(security).toEqual([{ sessionToken: [] }]);
    else if (rule!.endUser === false) expect(security).toEqual([{ bearer: [] }, ...sessions]);
    else expect(security).toEqual([{ bearer: [] }, { exchangeToken: [] }, ...sessions]);
    for (const requirement of security)
      for (const scheme of Object.keys(requirement)) expect(document.components.securitySchemes).toHaveProperty(scheme);
  });

  it('lists the exchange token on every feedback endpoint (Authentication 2) and on no workspace, folder or markup-list one', () => {
    const takesTokens = (route: (typeof routes)[number]) =>
      operationOf(route.method, route.path).security.some((requirement) => 'exchangeToken' in requirement);
    const feedback = routes.filter((route) => /^\/api\/v2\/(threads|messages)\b/.test(route.path));
    const administration = routes.filter(
      (route) => /^\/api\/v2\/(workspaces?|items)\b/.test(route.path) || route.path === '/api/v2/markups',
    );

    expect(feedback.length).toBeGreaterThan(10);
    expect(feedback.filter((route) => !takesTokens(route)).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    expect(administration.filter(takesTokens).map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });
});
