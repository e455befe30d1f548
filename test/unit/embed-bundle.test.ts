import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CACHE_EMBED, cacheControlFor, EMBED_SCRIPT_PATH, isAppPath } from '../../shared/http/web-app.js';
import { buildWeb, EMBED_SCRIPT } from '../../web/build.js';

/** Issue 31 item 6: the embeddable client is one ES module of at most 60 KB gzipped, built beside the app. */
const BUDGET_BYTES = 60 * 1024;

describe('the embeddable client module', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'embed-budget-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it(`is built at ${EMBED_SCRIPT_PATH}, one self-contained module exporting only mount, at most ${BUDGET_BYTES / 1024} KB gzipped`, () => {
    buildWeb({ outdir });
    expect(`/${EMBED_SCRIPT}`).toBe(EMBED_SCRIPT_PATH);
    const source = readFileSync(join(outdir, EMBED_SCRIPT), 'utf8');
    const gzipped = gzipSync(source, { level: 9 }).length;
    console.info(
      `embed client: ${(gzipped / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_BYTES / 1024} KB), ${(source.length / 1024).toFixed(1)} KB minified`,
    );

    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
    // One module: no imports of other files (chunks) a customer's CSP would have to allow separately
    // (import statements start a statement; a string such as "… css import" in the renderer's messages is none).
    expect(source).not.toMatch(/\bimport\s*\(|(?:^|[;}])\s*import\s*[{*"']|\}\s*from\s*["']/);
    const exported = [...source.matchAll(/export\s*\{([^}]*)\}/g)].flatMap((match) =>
      match[1]!.split(',').map((entry) =>
        entry
          .trim()
          .split(/\s+as\s+/)
          .pop(),
      ),
    );
    expect(exported).toEqual(['mount']);
    // Strict-CSP safe: nothing evaluates strings as code.
    expect(source).not.toMatch(/\beval\s*\(|new Function\s*\(/);
  });

  it('is served as a file with a short cache, never answered with the app', () => {
    expect(cacheControlFor(EMBED_SCRIPT_PATH)).toBe(CACHE_EMBED);
    expect(isAppPath(EMBED_SCRIPT_PATH)).toBe(false);
    expect(isAppPath('/embed/v1/')).toBe(false);
    expect(isAppPath('/embed/v2/missing')).toBe(false);
  });
});
