import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLicences, installedPackages, licenceOf, requiresAgpl } from '../../infra/tools/licences.js';

describe('the licence check (no AGPL package in the default install)', () => {
  it('reads SPDX expressions: an OR with a non-AGPL choice passes, an AND with the AGPL fails', () => {
    expect(requiresAgpl('AGPL-3.0-or-later')).toBe(true);
    expect(requiresAgpl('AGPL-3.0-only')).toBe(true);
    expect(requiresAgpl('MIT')).toBe(false);
    expect(requiresAgpl('GPL-3.0-or-later')).toBe(false);
    expect(requiresAgpl('LGPL-3.0-or-later')).toBe(false);
    expect(requiresAgpl('(MIT OR AGPL-3.0)')).toBe(false);
    expect(requiresAgpl('(AGPL-3.0 OR GPL-3.0)')).toBe(false);
    expect(requiresAgpl('MIT AND AGPL-3.0-only')).toBe(true);
    expect(requiresAgpl('(MIT AND Apache-2.0) OR (AGPL-3.0 AND MIT)')).toBe(false);
    expect(requiresAgpl('(Apache-2.0 AND BSD-3-Clause) AND AGPL-3.0-or-later WITH Classpath-exception-2.0')).toBe(true);
    expect(requiresAgpl('SEE LICENSE IN LICENSE (GNU Affero)')).toBe(true);
  });

  it('reads the license field, legacy objects and the legacy licenses array', () => {
    expect(licenceOf({ license: 'MIT' })).toBe('MIT');
    expect(licenceOf({ license: { type: 'AGPL-3.0' } })).toBe('AGPL-3.0');
    expect(licenceOf({ licenses: [{ type: 'MIT' }, { type: 'AGPL-3.0' }] })).toBe('(MIT OR AGPL-3.0)');
    expect(licenceOf({})).toBeUndefined();
  });

  const root = mkdtempSync(join(tmpdir(), 'licences-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const install = (path: string, manifest: Record<string, unknown>) => {
    mkdirSync(join(root, path), { recursive: true });
    writeFileSync(join(root, path, 'package.json'), JSON.stringify(manifest));
  };

  it('finds an AGPL package anywhere in node_modules (scoped, nested) unless it is a known one, and reports known ones that went', () => {
    install('node_modules/plain', { name: 'plain', version: '1.0.0', license: 'MIT' });
    install('node_modules/@scope/tool', { name: '@scope/tool', version: '2.0.0', license: 'Apache-2.0' });
    install('node_modules/plain/node_modules/deep', { name: 'deep', version: '0.1.0', license: 'AGPL-3.0-only' });
    install('node_modules/@scope/known', { name: '@scope/known', version: '1.0.0', license: 'AGPL-3.0-or-later' });

    const packages = installedPackages(root);

    expect(packages.map((pkg) => pkg.name).sort()).toEqual(['@scope/known', '@scope/tool', 'deep', 'plain']);
    const { offenders, stale } = checkLicences(packages, { '@scope/known': 'a reason', gone: 'removed already' });
    expect(offenders.map((pkg) => [pkg.name, pkg.path])).toEqual([['deep', join('node_modules', 'plain', 'node_modules', 'deep')]]);
    expect(stale).toEqual(['gone']);
  });
});
