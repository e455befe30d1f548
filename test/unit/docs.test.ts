import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README is what a newcomer reads in the first ten minutes; the rest lives in docs/ pages by
 * reader (issue 29). These checks keep that true as the docs change: the README stays short, no
 * relative link or anchor points at nothing, and no page is unreachable from the README.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const docPages = readdirSync(join(root, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`)
  .sort();
const pages = ['README.md', ...docPages];
const README_MAX_LINES = 160;

/** The lines outside fenced code blocks (fences may be indented, as inside list items). */
function outsideFences(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').filter((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || marker === fence)) {
      fence = fence === undefined ? marker : undefined;
      return false;
    }
    return fence === undefined;
  });
}

/** The text where links are markdown: outside fenced code and inline code spans. */
const prose = (markdown: string): string =>
  outsideFences(markdown)
    .join('\n')
    .replace(/`[^`]*`/g, '');

/** The anchors GitHub gives a page's headings (github-slugger: lower case, punctuation dropped, spaces to hyphens, repeats numbered). */
function headingAnchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of outsideFences(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const text = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const base = text
      .toLowerCase()
      .trim()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every relative link of a page: `[text](target)` with no URL scheme, outside code. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map(([, target]) => target!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** What is wrong with one link of `page`, or undefined when it resolves. */
function brokenLink(page: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? join(root, page) : resolve(join(root, dirname(page)), decodeURIComponent(path));
  if (relative(root, file).startsWith('..')) return 'leaves the repository';
  if (!existsSync(file)) return 'no such file';
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return 'an anchor on something that is not a markdown page';
  return headingAnchors(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor)) ? undefined : 'no heading with that anchor';
}

describe('the docs (issue 29: a short README, docs/ pages by reader, every link resolving)', () => {
  it(`keeps the README to at most ${README_MAX_LINES} lines`, () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').trimEnd().split('\n').length;

    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('points every relative link of README.md and docs/*.md at an existing file and heading', () => {
    const broken = pages.flatMap((page) =>
      relativeLinks(readFileSync(join(root, page), 'utf8')).flatMap((target) => {
        const problem = brokenLink(page, target);
        return problem ? [`${page}: (${target}) ${problem}`] : [];
      }),
    );

    expect(broken).toEqual([]);
  });

  it('links every docs/ page from the README', () => {
    const linked = new Set(
      relativeLinks(readFileSync(join(root, 'README.md'), 'utf8')).map((target) => relative(root, resolve(root, target.split('#')[0]!))),
    );

    expect(docPages.filter((page) => !linked.has(page))).toEqual([]);
  });

  it('slugs headings as GitHub does', () => {
    const anchors = headingAnchors(
      '# The local stack (`npm start`)\n## ETag, If-Match, If-None-Match\n## Notes\n## Notes\n```sh\n# not a heading\n```\n',
    );

    expect([...anchors]).toEqual(['the-local-stack-npm-start', 'etag-if-match-if-none-match', 'notes', 'notes-1']);
  });
});
