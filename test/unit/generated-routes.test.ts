import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allRoutes, routeGroups } from '../../functions/registry.js';
import { ROUTE_INDEX } from '../../functions/route-index.js';
import { GENERATED_FILES, generatedContents, staleGeneratedFiles } from '../../infra/tools/generated-routes.js';
import { buildOpenApi } from '../../shared/http/openapi.js';

describe('files generated from the route tables (route index, OpenAPI document)', () => {
  it('are what the route tables give now (else: npm run routes:generate)', () => {
    expect(staleGeneratedFiles(), 'out of date: run npm run routes:generate and commit the result').toEqual([]);
  });

  it('hold every route with its auth and permission, and the document the route tables build', () => {
    const routes = allRoutes();

    expect(ROUTE_INDEX.map(({ method, path }) => `${method} ${path}`)).toEqual(routes.map(({ method, path }) => `${method} ${path}`));
    expect(ROUTE_INDEX.map(({ auth, permission }) => ({ auth, permission }))).toEqual(
      routes.map(({ auth, permission }) => ({ auth, permission })),
    );
    expect(JSON.parse(readFileSync(GENERATED_FILES.openApi, 'utf8'))).toEqual(buildOpenApi(routeGroups()));
    expect(generatedContents().openApi).toBe(readFileSync(GENERATED_FILES.openApi, 'utf8'));
  });
});
