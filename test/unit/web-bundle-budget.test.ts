import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { buildWeb } from '../../web/build.js';

/** Issue 30: the review app's initial JavaScript (what index.html loads) is at most 150 KB gzipped. */
const BUDGET_BYTES = 150 * 1024;

describe('the review app bundle', () => {
  const outdir = mkdtempSync(join(tmpdir(), 'web-budget-'));
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it(`loads at most ${BUDGET_BYTES / 1024} KB of gzipped JavaScript at first`, () => {
    const build = buildWeb({ outdir });
    const html = readFileSync(join(outdir, 'index.html'), 'utf8');
    const sizes = build.scripts.map((path) => ({ path, gzipped: gzipSync(readFileSync(join(outdir, path)), { level: 9 }).length }));
    const total = sizes.reduce((sum, { gzipped }) => sum + gzipped, 0);
    console.info(
      `review app initial JavaScript: ${(total / 1024).toFixed(1)} KB gzipped (budget ${BUDGET_BYTES / 1024} KB): ${sizes.map(({ path, gzipped }) => `${path} ${gzipped} B`).join(', ')}`,
    );

    expect(build.scripts.length).toBeGreaterThan(0);
    for (const path of build.scripts) expect(html).toContain(`src="/${path}"`);
    expect(total).toBeLessThanOrEqual(BUDGET_BYTES);
  });
});
