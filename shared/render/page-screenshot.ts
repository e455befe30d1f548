import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { guardedArgs, RenderError, type ChromiumBinary } from './chromium.js';
import { startGuardedProxy, type NetworkGuard } from './guarded-proxy.js';

/**
 * Full-page screenshots of a webpage markup at one view mode, with the page's layout: where each
 * visible element is, so the board can pin threads on the elements they name (`elements[].path`)
 * and place a new comment on the element under a click.
 */

/**
 * The tallest screenshot in CSS pixels (taller pages are cut there, and their layout with them):
 * 16,384 px is Chromium's largest texture side, past which captures come back blank or fail.
 */
export const MAX_SCREENSHOT_HEIGHT = 16_384;
/** Elements a layout records at most (visible ones, in document order); the rest are left out and `truncated` says so. */
export const MAX_LAYOUT_ELEMENTS = 4_000;
/** Selectors of threads one render or one locate run resolves at most. */
export const MAX_LOCATED_PATHS = 500;

export interface PageBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * A page's layout at one view mode, in CSS pixels of its screenshot (document coordinates):
 * `elements` by their canonical CSS path (`html > body > main > p:nth-of-type(2)`), and `located`
 * the boxes of other selectors threads name (null: no visible element matches).
 */
export interface PageLayout {
  width: number;
  height: number;
  truncated: boolean;
  elements: (PageBox & { path: string })[];
  located: Record<string, PageBox | null>;
}

export interface PageRender {
  png: Buffer;
  width: number;
  height: number;
  layout: PageLayout;
}

/**
 * The script the page runs to describe its layout: a string, not a function's source, so no
 * bundler helper can leak into it. Canonical paths use tag names and :nth-of-type only, so a
 * path the board posts is a selector `document.querySelector` finds again.
 */
const layoutScript = (paths: readonly string[], height: number) => `(() => {
  const maxElements = ${MAX_LAYOUT_ELEMENTS}, maxY = ${height}, paths = ${JSON.stringify(paths)};
  const round = (value) => Math.round(value * 100) / 100;
  const boxOf = (element) => {
    const rect = element.getBoundingClientRect();
    if (rect.width < 1 || rect.height < 1) return null;
    const style = getComputedStyle(element);
    if (style.visibility === 'hidden' || style.display === 'contents') return null;
    const y = rect.top + scrollY;
    if (y >= maxY) return null;
    return { x: round(rect.left + scrollX), y: round(y), width: round(rect.width), height: round(Math.min(rect.height, maxY - y)) };
  };
  const pathOf = (element) => {
    const parts = [];
    for (let node = element; node && node.nodeType === 1; node = node.parentElement) {
      const tag = node.localName;
      const parent = node.parentElement;
      if (!parent) { parts.unshift(tag); break; }
      const same = Array.from(parent.children).filter((child) => child.localName === tag);
      parts.unshift(same.length > 1 ? tag + ':nth-of-type(' + (same.indexOf(node) + 1) + ')' : tag);
    }
    return parts.join(' > ');
  };
  const skip = new Set(['script', 'style', 'noscript', 'template', 'link', 'meta', 'title', 'head', 'br', 'wbr']);
  const elements = [];
  let truncated = false;
  const all = document.body ? [document.body, ...document.body.querySelectorAll('*')] : [];
  for (const element of all) {
    if (skip.has(element.localName)) continue;
    const box = boxOf(element);
    if (!box) continue;
    if (elements.length >= maxElements) { truncated = true; break; }
    elements.push({ path: pathOf(element), ...box });
  }
  const located = {};
  for (const path of paths) {
    let element = null;
    try { element = document.querySelector(path); } catch { element = null; }
    located[path] = element ? boxOf(element) : null;
  }
  return { elements, located, truncated };
})()`;

const DOCUMENT_HEIGHT = 'Math.ceil(Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0))';
/** Fonts loaded and two frames painted, or a second at most. */
const SETTLE =
  'Promise.race([new Promise((resolve) => setTimeout(resolve, 1000)), document.fonts.ready.then(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))))])';

/**
 * Renders `url` at `viewport.width` CSS pixels wide (device scale 1) into a full-page PNG at most
 * MAX_SCREENSHOT_HEIGHT tall, with its layout and the boxes of `paths` (threads' selectors, at
 * most MAX_LOCATED_PATHS). Chromium runs as renderThumbnail runs it, every connection through the
 * guarded proxy, and is driven over its DevTools pipe (no port is opened); killed after `timeoutMs`.
 * With `screenshot: false` only the layout is read (locating threads' selectors).
 */
export async function renderPage(
  chromium: ChromiumBinary,
  url: string,
  options: {
    guard: NetworkGuard;
    viewport: { width: number; height: number };
    paths?: readonly string[];
    screenshot?: boolean;
    timeoutMs?: number;
  },
): Promise<PageRender> {
  const timeoutMs = options.timeoutMs ?? 40_000;
  const { width } = options.viewport;
  const dir = await mkdtemp(join(tmpdir(), 'render-page-'));
  const proxy = await startGuardedProxy(options.guard);
  const child = spawn(
    chromium.path,
    [
      ...guardedArgs(chromium, dir, proxy.url),
      '--remote-debugging-pipe',
      `--window-size=${width},${options.viewport.height}`,
      'about:blank',
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const session = new DevToolsPipe(child.stdio[3] as Writable, child.stdio[4] as Readable);
  const timer = setTimeout(() => {
    session.fail(new RenderError(`Rendering took longer than ${timeoutMs} ms`));
    child.kill('SIGKILL');
  }, timeoutMs);
  child.once('error', (error) => session.fail(new RenderError(`Chromium could not start: ${error.message}`)));
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      session.fail(new RenderError(`Chromium exited with ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`));
      resolve();
    });
    child.once('error', () => resolve());
  });
  try {
    const { targetInfos } = await session.send<{ targetInfos: { targetId: string; type: string }[] }>('Target.getTargets');
    const targetId =
      targetInfos.find((target) => target.type === 'page')?.targetId ??
      (await session.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' })).targetId;
    const { sessionId } = await session.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    const page = <T>(method: string, params: Record<string, unknown> = {}) => session.send<T>(method, params, sessionId);
    await page('Page.enable');
    await page('Emulation.setDeviceMetricsOverride', { width, height: options.viewport.height, deviceScaleFactor: 1, mobile: false });
    // A page whose load event never fires (a stalled resource) is taken as it is after 20 s. Handled
    // from the start: when navigation fails first, nobody awaits it, and its rejection (Chromium
    // killed, the wait over) must not surface as an unhandled rejection that ends the worker.
    const loaded = session.next('Page.loadEventFired', sessionId, 20_000).catch(() => undefined);
    const navigation = await page<{ errorText?: string }>('Page.navigate', { url });
    if (navigation.errorText) throw new RenderError(`The page could not be loaded: ${navigation.errorText}`);
    await loaded;
    await page('Runtime.evaluate', { expression: SETTLE, awaitPromise: true });
    const documentHeight = await evaluate<number>(page, DOCUMENT_HEIGHT);
    const height = Math.max(1, Math.min(MAX_SCREENSHOT_HEIGHT, documentHeight));
    const found = await evaluate<Omit<PageLayout, 'width' | 'height'>>(
      page,
      layoutScript([...new Set(options.paths ?? [])].slice(0, MAX_LOCATED_PATHS), height),
    );
    const layout: PageLayout = { width, height, ...found };
    if (options.screenshot === false) return { png: Buffer.alloc(0), width, height, layout };
    const shot = await page<{ data: string }>('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: true,
      clip: { x: 0, y: 0, width, height, scale: 1 },
    });
    return { png: Buffer.from(shot.data, 'base64'), width, height, layout };
  } finally {
    clearTimeout(timer);
    child.kill('SIGKILL');
    // Its profile is removed once it stopped writing there.
    await exited;
    await proxy.close();
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

async function evaluate<T>(page: <R>(method: string, params?: Record<string, unknown>) => Promise<R>, expression: string): Promise<T> {
  const answer = await page<{ result: { value?: T }; exceptionDetails?: { text?: string } }>('Runtime.evaluate', {
    expression,
    returnByValue: true,
  });
  if (answer.exceptionDetails)
    throw new RenderError(`The page's layout could not be read: ${answer.exceptionDetails.text ?? 'script error'}`);
  return answer.result.value as T;
}

/** The DevTools protocol over Chromium's pipe (fd 3 in, fd 4 out): JSON messages ended by a NUL byte. */
class DevToolsPipe {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private readonly waiters = new Set<{ method: string; sessionId?: string; resolve: () => void; reject: (error: Error) => void }>();
  private chunks: Buffer[] = [];
  private failure: Error | undefined;

  constructor(
    private readonly input: Writable,
    output: Readable,
  ) {
    input.on('error', () => undefined);
    output.on('data', (chunk: Buffer) => {
      let start = 0;
      for (let end = chunk.indexOf(0); end >= 0; end = chunk.indexOf(0, start)) {
        this.chunks.push(chunk.subarray(start, end));
        const text = Buffer.concat(this.chunks).toString('utf8');
        this.chunks = [];
        start = end + 1;
        this.dispatch(
          JSON.parse(text) as { id?: number; method?: string; sessionId?: string; result?: unknown; error?: { message: string } },
        );
      }
      if (start < chunk.length) this.chunks.push(chunk.subarray(start));
    });
  }

  private dispatch(message: { id?: number; method?: string; sessionId?: string; result?: unknown; error?: { message: string } }): void {
    if (message.id !== undefined) {
      const call = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error) call?.reject(new RenderError(`Chromium refused: ${message.error.message}`));
      else call?.resolve(message.result);
      return;
    }
    for (const waiter of this.waiters) {
      if (waiter.method === message.method && waiter.sessionId === message.sessionId) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  send<T>(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.input.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }

  /** The next event `method` of `sessionId`, or a rejection after `timeoutMs`. */
  next(method: string, sessionId: string, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new RenderError(`No ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = {
        method,
        sessionId,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Fails every call in flight and every later one (Chromium died or ran out of time). */
  fail(error: Error): void {
    this.failure ??= error;
    for (const call of this.pending.values()) call.reject(this.failure);
    this.pending.clear();
    for (const waiter of this.waiters) waiter.reject(this.failure);
    this.waiters.clear();
  }
}
