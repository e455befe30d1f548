import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { BUNDLING } from '../../infra/constructs/bundling.js';

/** semver (ISC; sharp's dependency, locked) has no types here: the two functions used. */
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const manifest = JSON.parse(read('package.json')) as { engines: { node: string }; scripts: Record<string, string> };
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { engines?: { node?: string } | string[]; os?: string[]; cpu?: string[] }>;
};
/** npm checks the engines of the packages it installs here, not of other platforms' optional builds. */
const installedHere = ({ os, cpu }: { os?: string[]; cpu?: string[] }) =>
  (!os || os.includes(process.platform)) && (!cpu || cpu.includes(process.arch));

describe('set-up: npm ci installs, builds nothing, on the Node Lambda runs (issue 29, items 1 and 2)', () => {
  it('runs no install script: ffmpeg is built where it is needed, not by npm ci', () => {
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts, hook).not.toHaveProperty(hook);
    expect(manifest.scripts['converters:ffmpeg']).toBe('infra/tools/build-ffmpeg.sh');
  });

  it("asks for Node 22 (.nvmrc, engines, the bundles' syntax), which every installed package accepts: no EBADENGINE warning", () => {
    const lowest = semver.minVersion(manifest.engines.node)!.version;
    const refusing = Object.entries(lock.packages)
      .filter(([, entry]) => installedHere(entry))
      .map(([path, entry]) => [path, Array.isArray(entry.engines) ? undefined : entry.engines?.node] as const)
      .filter((entry): entry is readonly [string, string] => entry[1] !== undefined && !semver.satisfies(lowest, entry[1]))
      .map(([path, range]) => `${path} wants ${range}`);

    expect(read('.nvmrc').trim()).toBe('22');
    expect(lowest).toMatch(/^22\./);
    expect(refusing).toEqual([]);
    expect(BUNDLING.target).toBe('node22');
  });
});
