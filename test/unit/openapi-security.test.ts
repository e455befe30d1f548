import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { PERMISSIONS } from '../../shared/auth/permissions.js';
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
  });

  it.each(routes.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', (_key, route) => {
    const { security } = operationOf(route.method, route.path);

    if (route.auth === 'none') expect(security).toEqual([]);
    else if (PERMISSIONS[route.permission!].endUser === false) expect(security).toEqual([{ bearer: [] }]);
    else expect(security).toEqual([{ bearer: [] }, { exchangeToken: [] }]);
    for (const requirement of security) for (const scheme of Object.keys(requirement)) expect(document.components.securitySchemes).toHaveProperty(scheme);
  });

  it('lists the exchange token on every feedback endpoint (Authentication 2) and on no workspace, folder or markup-list one', () => {
    const takesTokens = (route: (typeof routes)[number]) => operationOf(route.method, route.path).security.some((requirement) => 'exchangeToken' in requirement);
    const feedback = routes.filter((route) => /^\/api\/v2\/(threads|messages)\b/.test(route.path));
    const administration = routes.filter((route) => /^\/api\/v2\/(workspaces?|items)\b/.test(route.path) || route.path === '/api/v2/markups');

    expect(feedback.length).toBeGreaterThan(10);
    expect(feedback.filter((route) => !takesTokens(route)).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    expect(administration.filter(takesTokens).map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });
});
