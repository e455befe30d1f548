import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { allRoutes, routeGroups } from '../../functions/registry.js';
import type { RouteIndexEntry } from '../../functions/route-index.js';
import { buildOpenApi } from '../../shared/http/openapi.js';

/**
 * The two files derived from the route tables that functions load instead of the tables (so they
 * never evaluate the operations' code): the route index (method, path, auth, permission of every
 * route; for CORS preflights and the `$default` route's 405) and the OpenAPI document. The route
 * tables stay the one source: `npm run routes:generate` rewrites both, and a unit test
 * (test/unit/generated-routes.test.ts) fails when either differs from what the tables give.
 */
export const GENERATED_FILES = {
  routeIndex: fileURLToPath(new URL('../../functions/route-index.generated.json', import.meta.url)),
  openApi: fileURLToPath(new URL('../../functions/openapi/openapi.generated.json', import.meta.url)),
} as const;

export function generatedContents(): Record<keyof typeof GENERATED_FILES, string> {
  const routes = allRoutes();
  const index: RouteIndexEntry[] = routes.map(({ method, path, auth, permission }) => ({
    method,
    path,
    auth,
    ...(permission ? { permission } : {}),
  }));
  return {
    routeIndex: `${JSON.stringify(index, null, 2)}\n`,
    openApi: `${JSON.stringify(buildOpenApi(routeGroups()), null, 2)}\n`,
  };
}

/** The generated files whose committed content is not what the route tables give now. */
export function staleGeneratedFiles(): string[] {
  const contents = generatedContents();
  return (Object.keys(GENERATED_FILES) as (keyof typeof GENERATED_FILES)[])
    .filter((name) => {
      try {
        return readFileSync(GENERATED_FILES[name], 'utf8') !== contents[name];
      } catch {
        return true;
      }
    })
    .map((name) => GENERATED_FILES[name]);
}

const invoked = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (invoked) {
  const contents = generatedContents();
  for (const name of Object.keys(GENERATED_FILES) as (keyof typeof GENERATED_FILES)[]) writeFileSync(GENERATED_FILES[name], contents[name]);
  process.stdout.write(`routes: wrote ${Object.values(GENERATED_FILES).length} files\n`);
}
