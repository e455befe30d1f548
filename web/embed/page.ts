/**
 * What a new webpage thread records about the page and the browser (DESIGN.md "Embeddable client"):
 * the canonical URL, the view mode by viewport width, a complete `browserContext`, the element's
 * parents and where in the element the click landed.
 */
import { selectorOf } from '../anchoring/index.js';

export type ViewCategory = 'desktop' | 'tablet' | 'mobile';

/** Under 768 px mobile, under 1024 tablet, else desktop. */
export const viewCategoryOf = (width: number): ViewCategory => (width < 768 ? 'mobile' : width < 1024 ? 'tablet' : 'desktop');

/** The page's `<link rel=canonical>` (absolute), else its URL without query and hash. */
export function canonicalUrl(): string {
  const link = document.querySelector<HTMLLinkElement>('link[rel~="canonical" i][href]');
  if (link?.href && /^https?:/.test(link.href)) return link.href;
  return `${location.origin}${location.pathname}`;
}

export const pageUrl = (): string => location.href;

export interface BrowserContext {
  browserName: string;
  browserVersion: string;
  os: string;
  osVersion: string;
  osVersionName: string;
  platform: string;
  screenWidth: number;
  screenHeight: number;
  viewportWidth: number;
  viewportHeight: number;
}

const BROWSERS: [string, RegExp][] = [
  ['Edge', /Edg(?:e|A|iOS)?\/([\d.]+)/],
  ['Opera', /OPR\/([\d.]+)/],
  ['Samsung Internet', /SamsungBrowser\/([\d.]+)/],
  ['Firefox', /(?:Firefox|FxiOS)\/([\d.]+)/],
  ['Chrome', /(?:HeadlessChrome|Chrome|CriOS)\/([\d.]+)/],
  ['Safari', /Version\/([\d.]+).*Safari/],
];

const SYSTEMS: [string, RegExp, (version: string) => string][] = [
  ['iOS', /(?:iPhone|iPad|iPod).*? OS ([\d_]+)/, (version) => `iOS ${version.split('.')[0]}`],
  ['Android', /Android ([\d.]+)/, (version) => `Android ${version.split('.')[0]}`],
  [
    'Windows',
    /Windows NT ([\d.]+)/,
    (version) => ({ '10.0': 'Windows 10 or 11', 6.3: 'Windows 8.1', 6.2: 'Windows 8', 6.1: 'Windows 7' })[version] ?? 'Windows',
  ],
  ['macOS', /Mac OS X ([\d_.]+)/, (version) => `macOS ${version.split('.').slice(0, 2).join('.')}`],
  ['ChromeOS', /CrOS \S+ ([\d.]+)/, () => 'ChromeOS'],
  ['Linux', /Linux/, () => 'Linux'],
];

/** Every field of BrowserContextRequest, from the user agent and the window (`unknown` where the browser does not tell). */
export function browserContext(userAgent = navigator.userAgent): BrowserContext {
  const browser = BROWSERS.map(([name, pattern]) => [name, pattern.exec(userAgent)?.[1]] as const).find(
    ([, version]) => version !== undefined,
  );
  const system = SYSTEMS.map(([name, pattern, label]) => {
    const match = pattern.exec(userAgent);
    const version = match ? (match[1] ?? '').replace(/_/g, '.') : undefined;
    return match ? { name, version: version || 'unknown', label: label(version ?? '') } : undefined;
  }).find(Boolean);
  const mobile = /Mobi|iPhone|Android.*Mobile/.test(userAgent);
  const tablet = /iPad|Tablet|Android(?!.*Mobile)/.test(userAgent);
  return {
    browserName: browser?.[0] ?? 'unknown',
    browserVersion: browser?.[1] ?? 'unknown',
    os: system?.name ?? 'unknown',
    osVersion: system?.version ?? 'unknown',
    osVersionName: system?.label ?? 'unknown',
    platform: mobile ? 'mobile' : tablet ? 'tablet' : 'desktop',
    screenWidth: screen.width,
    screenHeight: screen.height,
    viewportWidth: document.documentElement.clientWidth || innerWidth,
    viewportHeight: document.documentElement.clientHeight || innerHeight,
  };
}

export interface ElementParent {
  url: string;
  canonicalUrl: string;
  path: string;
  depth: number;
}

/** The element's ancestors up to `<body>`, nearest first (`depth` 1), each by its own selector. */
export function elementParents(element: Element, limit = 30): ElementParent[] {
  const parents: ElementParent[] = [];
  const url = pageUrl();
  const canonical = canonicalUrl();
  for (
    let parent = element.parentElement, depth = 1;
    parent && parent !== document.documentElement && depth <= limit;
    parent = parent.parentElement, depth += 1
  ) {
    parents.push({ url, canonicalUrl: canonical, path: selectorOf(parent), depth });
  }
  return parents;
}

const round = (value: number) => Math.round(Math.min(100, Math.max(0, value)) * 100) / 100;

/** Where `(x, y)` (viewport pixels) is in `element`'s box, in percentages. */
export function offsetsWithin(element: Element, x: number, y: number): { offsetXPercentage: number; offsetYPercentage: number } {
  const box = element.getBoundingClientRect();
  return {
    offsetXPercentage: box.width ? round(((x - box.left) / box.width) * 100) : 50,
    offsetYPercentage: box.height ? round(((y - box.top) / box.height) * 100) : 50,
  };
}
