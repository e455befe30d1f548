import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_DOCS, codeBlocks, installPackedClient, typeCheck } from '../support/client-package.js';

/**
 * The typed client as a package (issue 29, item 5): `npm pack` of clients/typescript installs into
 * a scratch project, whose own `tsc` (settings from the usage page) compiles the page's code blocks
 * against the installed declarations, and refuses a string where the API takes a number.
 */
const BROWSER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'bundler',
    lib: ['ES2023', 'DOM'],
    types: [],
    strict: true,
    noEmit: true,
  },
};

const LIST_FIVE = `import { createReviewBoardClient } from '@review-board/client';

const client = createReviewBoardClient({ baseUrl: 'https://review-board.example', credential: 'a workspace API key' });
const page = await client.GET('/api/v2/markups', { params: { query: { limit: LIMIT } } });
if (page.error) throw new Error(page.error.detail);
export const names: string[] = page.data.data.data.map((markup) => markup.name);
`;

let project: string;
let tarball: string;

beforeAll(async () => {
  ({ project, tarball } = await installPackedClient({ extra: ['@types/node'] }));
}, 180_000);

afterAll(() => {
  if (project) rmSync(dirname(project), { recursive: true, force: true });
});

describe('the TypeScript client package (issue 29, item 5)', () => {
  it('packs its built JavaScript and declarations only, with exports that name both', () => {
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/@review-board/client/package.json'), 'utf8'));

    expect(files).toEqual([
      'package/dist/index.d.ts',
      'package/dist/index.js',
      'package/dist/schema.generated.d.ts',
      'package/dist/schema.generated.js',
      'package/package.json',
    ]);
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch']);
  });

  it('compiles every code block of docs/typescript-client.md, in order, with the tsconfig the page shows', async () => {
    const page = readFileSync(CLIENT_DOCS, 'utf8');
    const program = codeBlocks(page, 'ts').join('\n');
    const tsconfig = codeBlocks(page, 'json')
      .map((block) => JSON.parse(block))
      .find((json) => json.compilerOptions);
    writeFileSync(join(project, 'docs.ts'), program);
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ ...tsconfig, files: ['docs.ts'] }));

    const { code, output } = await typeCheck(project, ['-p', 'tsconfig.json', '--noEmit']);

    expect(program).toContain("client.POST('/api/v2/markups/url'");
    expect(program).toMatch(/query: \{ limit: \w+/);
    expect(output).toBe('');
    expect(code).toBe(0);
  }, 120_000);

  it("takes limit as a number in a browser project, and refuses { limit: '5' }", async () => {
    writeFileSync(join(project, 'number.ts'), LIST_FIVE.replace('LIMIT', '5'));
    writeFileSync(join(project, 'string.ts'), LIST_FIVE.replace('LIMIT', "'5'"));
    writeFileSync(join(project, 'tsconfig.number.json'), JSON.stringify({ ...BROWSER_TSCONFIG, files: ['number.ts'] }));
    writeFileSync(join(project, 'tsconfig.string.json'), JSON.stringify({ ...BROWSER_TSCONFIG, files: ['string.ts'] }));

    const number = await typeCheck(project, ['-p', 'tsconfig.number.json']);
    const string = await typeCheck(project, ['-p', 'tsconfig.string.json']);

    expect(number).toEqual({ code: 0, output: '' });
    expect(string.code).not.toBe(0);
    expect(string.output).toMatch(/^string\.ts\(4,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/m);
    expect(string.output.match(/error TS/g)).toHaveLength(1);
  }, 120_000);
});
