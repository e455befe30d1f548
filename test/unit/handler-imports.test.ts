import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFilesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return sourceFilesUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file names: static imports and re-exports (type-only ones too), and dynamic imports. */
function specifiersOf(source: string): string[] {
  const found = [
    ...source.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return found.map((match) => match[1]!);
}

/** The repository path a relative specifier names (`../../shared/db/items.js` -> `shared/db/items.js`). */
const targetOf = (file: string, specifier: string) =>
  relative(root, resolve(root, dirname(file), specifier))
    .split('\\')
    .join('/');

describe('handlers call only the domain (issue 33: one door into authorization and the table)', () => {
  it('finds the imports it checks', () => {
    const sample =
      "import { a } from '../../shared/db/items.js';\nimport type {\n  B,\n} from '../x.js';\nexport { c } from './c.js';\nawait import('./d.js');";

    expect(specifiersOf(sample)).toEqual(['../../shared/db/items.js', '../x.js', './c.js', './d.js']);
  });

  it('imports nothing from shared/db in any file under functions/', () => {
    const offenders = sourceFilesUnder('functions').flatMap((file) =>
      specifiersOf(readFileSync(join(root, file), 'utf8'))
        .filter((specifier) => specifier.startsWith('.') && targetOf(file, specifier).startsWith('shared/db/'))
        .map((specifier) => `${file} imports ${specifier}`),
    );

    expect(offenders).toEqual([]);
  });

  it('leaves authorization to the domain: no file under functions/ imports shared/auth/authorize', () => {
    const offenders = sourceFilesUnder('functions').filter((file) =>
      specifiersOf(readFileSync(join(root, file), 'utf8')).some(
        (specifier) => specifier.startsWith('.') && targetOf(file, specifier) === 'shared/auth/authorize.js',
      ),
    );

    expect(offenders).toEqual([]);
  });
});
