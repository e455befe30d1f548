import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The licence check of `.ci/run` (issue 14): no package under the GNU Affero GPL in the default
 * install. Operators deploy this service into their own accounts, and AGPL code linked into a
 * function they run is a licence review they should not need. Reads every installed
 * `package.json` (nested `node_modules` and scopes included) and fails on a licence expression that
 * cannot be satisfied without an AGPL licence.
 */

/** Installed packages still under the AGPL, each with why it is here and what removes it. */
export const KNOWN_AGPL: Readonly<Record<string, string>> = {};

/** The licence of a package.json: `license` (an SPDX expression or a legacy object), or the legacy `licenses` array (any of them). */
export function licenceOf(manifest: Record<string, unknown>): string | undefined {
  const field = manifest.license ?? manifest.licenses;
  if (typeof field === 'string') return field;
  if (Array.isArray(field)) {
    const types = field
      .map((entry) => (typeof entry === 'string' ? entry : (entry as { type?: unknown })?.type))
      .filter((type): type is string => typeof type === 'string');
    return types.length > 0 ? `(${types.join(' OR ')})` : undefined;
  }
  if (field && typeof field === 'object' && typeof (field as { type?: unknown }).type === 'string') return (field as { type: string }).type;
  return undefined;
}

/**
 * Whether an SPDX expression requires the AGPL: every way to satisfy it includes an AGPL licence.
 * `OR` offers a choice (one non-AGPL alternative is enough), `AND` requires all; `WITH` exceptions
 * keep their licence. Unparsable expressions that mention the AGPL count as requiring it.
 */
export function requiresAgpl(expression: string): boolean {
  const tokens = expression
    .replace(/[()]/g, (paren) => ` ${paren} `)
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  let index = 0;
  const isAgpl = (id: string) => /^AGPL/i.test(id) || /affero/i.test(id);
  // or := and ('OR' and)*;  and := atom ('AND' atom)*;  atom := '(' or ')' | id ('WITH' id)?
  const parseOr = (): boolean => {
    let result = parseAnd();
    while (tokens[index]?.toUpperCase() === 'OR') {
      index += 1;
      const right = parseAnd();
      result = result && right;
    }
    return result;
  };
  const parseAnd = (): boolean => {
    let result = parseAtom();
    while (tokens[index]?.toUpperCase() === 'AND') {
      index += 1;
      const right = parseAtom();
      result = result || right;
    }
    return result;
  };
  const parseAtom = (): boolean => {
    const token = tokens[index];
    if (token === undefined) throw new Error('unexpected end');
    index += 1;
    if (token === '(') {
      const inner = parseOr();
      if (tokens[index] !== ')') throw new Error('unbalanced');
      index += 1;
      return inner;
    }
    if (tokens[index]?.toUpperCase() === 'WITH') index += 2;
    return isAgpl(token);
  };
  try {
    const result = parseOr();
    if (index !== tokens.length) throw new Error('trailing tokens');
    return result;
  } catch {
    return isAgpl(expression) || /AGPL|affero/i.test(expression);
  }
}

export interface InstalledPackage {
  name: string;
  version: string;
  licence: string | undefined;
  /** Relative to the project root. */
  path: string;
}

/** Every package installed under `root/node_modules`, nested ones included. */
export function installedPackages(root: string): InstalledPackage[] {
  const found: InstalledPackage[] = [];
  const visit = (modules: string) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const dirs = entry.name.startsWith('@')
        ? readdirSync(join(modules, entry.name), { withFileTypes: true })
            .filter((scoped) => scoped.isDirectory())
            .map((scoped) => join(modules, entry.name, scoped.name))
        : [join(modules, entry.name)];
      for (const dir of dirs) {
        const manifestPath = join(dir, 'package.json');
        if (existsSync(manifestPath)) {
          const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
          found.push({
            name: String(manifest.name ?? relative(modules, dir)),
            version: String(manifest.version ?? ''),
            licence: licenceOf(manifest),
            path: relative(root, dir),
          });
        }
        visit(join(dir, 'node_modules'));
      }
    }
  };
  visit(join(root, 'node_modules'));
  return found;
}

/** What the check reports: AGPL packages not in `known`, and entries of `known` no longer installed (a stale list hides nothing). */
export function checkLicences(
  packages: readonly InstalledPackage[],
  known: Readonly<Record<string, string>> = KNOWN_AGPL,
): { offenders: InstalledPackage[]; stale: string[] } {
  const agpl = packages.filter((pkg) => pkg.licence !== undefined && requiresAgpl(pkg.licence));
  return {
    offenders: agpl.filter((pkg) => !(pkg.name in known)),
    stale: Object.keys(known).filter((name) => !agpl.some((pkg) => pkg.name === name)),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? process.cwd();
  const packages = installedPackages(root);
  const { offenders, stale } = checkLicences(packages);
  for (const pkg of offenders)
    process.stderr.write(
      `licences: ${pkg.name}@${pkg.version} (${pkg.path}) is licensed ${pkg.licence}: no AGPL code in the default install\n`,
    );
  for (const name of stale)
    process.stderr.write(
      `licences: ${name} is listed in KNOWN_AGPL (infra/tools/licences.ts) but no longer installed under the AGPL: remove it from the list\n`,
    );
  const known = Object.entries(KNOWN_AGPL).filter(([name]) => !stale.includes(name));
  process.stdout.write(
    `licences: ${packages.length} installed packages checked; ${offenders.length} AGPL package(s) not allowed${known.length > 0 ? `; still known, to be removed: ${known.map(([name, why]) => `${name} (${why})`).join('; ')}` : ''}\n`,
  );
  if (offenders.length > 0 || stale.length > 0) process.exit(1);
}
