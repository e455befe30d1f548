import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { GENERATED_FILES } from './generated-routes.js';

/** The TypeScript client's types, generated from the committed OpenAPI document. */
export const CLIENT_TYPES_FILE = fileURLToPath(new URL('../../clients/typescript/schema.generated.ts', import.meta.url));

/**
 * What openapi-typescript makes of the OpenAPI document (`paths`, `components`, `operations`), the
 * same text its CLI writes. `npm run client:generate` writes it; `npm run client:check` (.ci/run)
 * fails when the committed file differs, so the client's types never lag the document.
 */
export async function clientTypes(): Promise<string> {
  const document = JSON.parse(readFileSync(GENERATED_FILES.openApi, 'utf8')) as Parameters<typeof openapiTS>[0];
  return `${COMMENT_HEADER}${astToString(await openapiTS(document))}`;
}

const invoked = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (invoked) {
  const expected = await clientTypes();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    } catch {
      // Missing counts as out of date.
    }
    if (committed !== expected) {
      process.stderr.write(
        `client: ${CLIENT_TYPES_FILE} does not match the OpenAPI document (functions/openapi/openapi.generated.json): run npm run client:generate and commit the result\n`,
      );
      process.exit(1);
    }
    process.stdout.write("client: the TypeScript client's types match the OpenAPI document\n");
  } else {
    writeFileSync(CLIENT_TYPES_FILE, expected);
    process.stdout.write(`client: wrote ${CLIENT_TYPES_FILE}\n`);
  }
}
