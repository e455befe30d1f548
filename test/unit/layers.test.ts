import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The arrows between the service's layers run one way (DESIGN.md, README "Layout"): handlers
 * (functions/) call the domain; the domain uses auth and db; db answers results. Errors and cursors
 * sit below all of them (shared/errors.ts, shared/db/core/cursor.ts), so nothing below HTTP needs
 * it. These tests read every import of the tree, so an arrow running the wrong way fails here.
 */
const root = path.resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => path.join(dir, file).split(path.sep).join('/'));
}

/** Every relative import (static, dynamic, `export … from`) of `file`, as a repository path. */
function importsOf(file: string): string[] {
  const source = readFileSync(path.join(root, file), 'utf8');
  const specifiers = [...source.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((match) => match[1]!);
  return specifiers.map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)));
}

/** The imports from files under `from` into any of `into`, as `file -> import`. */
function arrows(from: string, into: string[]): string[] {
  return sourceFiles(from).flatMap((file) =>
    importsOf(file)
      .filter((target) => into.some((folder) => target.startsWith(`${folder}/`)))
      .map((target) => `${file} -> ${target}`),
  );
}

describe('layers', () => {
  it('finds the imports it checks (a parser that saw none would pass everything)', () => {
    expect(arrows('shared/domain', ['shared/db']).length).toBeGreaterThan(100);
    expect(arrows('functions', ['shared/domain']).length).toBeGreaterThan(50);
  });

  it('db, auth and the domain never import HTTP or a handler', () => {
    expect(arrows('shared/db', ['shared/http', 'functions'])).toEqual([]);
    expect(arrows('shared/auth', ['shared/http', 'functions'])).toEqual([]);
    expect(arrows('shared/domain', ['shared/http', 'functions'])).toEqual([]);
  });

  it('db never imports the domain or auth: it answers results', () => {
    expect(arrows('shared/db', ['shared/domain', 'shared/auth'])).toEqual([]);
  });

  it('the schemas the domain types its views by are transport-free and below the domain', () => {
    expect(arrows('shared/schemas', ['shared/http', 'shared/domain', 'shared/db', 'shared/auth', 'functions'])).toEqual([]);
  });

  it('the error vocabulary imports nothing of the service', () => {
    expect(importsOf('shared/errors.ts')).toEqual([]);
  });
});
