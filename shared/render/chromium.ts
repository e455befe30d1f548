import { spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGuardedProxy, type NetworkGuard } from './guarded-proxy.js';

/** Layout size of the rendered page in CSS pixels; the PNG is half of it (device scale 0.5). */
export const VIEWPORT = { width: 1280, height: 800 } as const;
export const THUMBNAIL = { width: 640, height: 400 } as const;

export const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export interface ChromiumBinary {
  path: string;
  /** Flags the build needs on top of ours (the Lambda build brings its own). */
  args: string[];
}

/**
 * The Chromium to render with: on Lambda the packed build of @sparticuz/chromium from its layer
 * (`CHROMIUM_PACK_DIR`, inflated to /tmp on first use), else `CHROMIUM_PATH`, else a Debian/Ubuntu
 * install, else none.
 */
export async function findChromium(settings: { chromiumPath?: string; chromiumPackDir?: string }): Promise<ChromiumBinary | undefined> {
  if (settings.chromiumPackDir) {
    const { default: packed } = await import('@sparticuz/chromium');
    return { path: await packed.executablePath(settings.chromiumPackDir), args: packed.args };
  }
  for (const candidate of settings.chromiumPath ? [settings.chromiumPath] : CHROMIUM_CANDIDATES) {
    try {
      await access(candidate, constants.X_OK);
      return { path: candidate, args: [] };
    } catch {
      // not this one
    }
  }
  return undefined;
}

export class RenderError extends Error {
  override name = 'RenderError';
}

/**
 * The flags of a Chromium that talks to nobody by itself: no sandbox (containers), no GPU, no QUIC,
 * no first-run, background networking, component updates or sync (this machine's closed network
 * otherwise makes Chromium retry forever). Renders add their guards (guardedArgs); the browser tests
 * and the anchoring bench start with these alone.
 */
export const QUIET_CHROMIUM_FLAGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The flags every render starts Chromium with: a fresh profile in `dir`, background networking off
 * (this machine's closed network otherwise makes Chromium retry forever), and every connection
 * through the guarded proxy at `proxyUrl` (see renderThumbnail).
 */
export function guardedArgs(chromium: ChromiumBinary, dir: string, proxyUrl: string): string[] {
  return [
    ...chromium.args.filter((flag) => !flag.startsWith('--window-size') && !flag.startsWith('--headless')),
    '--headless',
    ...QUIET_CHROMIUM_FLAGS,
    '--disable-dev-shm-usage',
    '--hide-scrollbars',
    '--mute-audio',
    '--disable-extensions',
    `--proxy-server=${proxyUrl}`,
    '--proxy-bypass-list=<-loopback>',
    '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--user-data-dir=${join(dir, 'profile')}`,
  ];
}

/**
 * Screenshots `url` with headless Chromium into a PNG of THUMBNAIL size. Runs in a fresh profile with
 * background networking off (this machine's closed network otherwise makes Chromium retry forever)
 * and is killed after `timeoutMs`. Every connection Chromium makes goes through a guarded proxy
 * (see startGuardedProxy) that connects only to addresses `guard` allows; Chromium itself resolves
 * no names (every name maps to NOTFOUND but the proxy's address), does not bypass the proxy for
 * loopback, and sends WebRTC's UDP nowhere but through the proxy.
 */
export async function renderThumbnail(
  chromium: ChromiumBinary,
  url: string,
  options: { guard: NetworkGuard; timeoutMs?: number },
): Promise<Buffer> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const dir = await mkdtemp(join(tmpdir(), 'render-'));
  const output = join(dir, 'thumbnail.png');
  const proxy = await startGuardedProxy(options.guard);
  try {
    const args = [
      ...guardedArgs(chromium, dir, proxy.url),
      `--window-size=${VIEWPORT.width},${VIEWPORT.height}`,
      `--force-device-scale-factor=${THUMBNAIL.width / VIEWPORT.width}`,
      '--virtual-time-budget=5000',
      `--screenshot=${output}`,
      url,
    ];
    await new Promise<void>((resolve, reject) => {
      const child = spawn(chromium.path, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new RenderError(`Chromium could not start: ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else
          reject(
            new RenderError(
              signal === 'SIGKILL'
                ? `Rendering took longer than ${timeoutMs} ms`
                : `Chromium exited with ${code}: ${stderr.trim().split('\n').at(-1) ?? ''}`,
            ),
          );
      });
    });
    return await readFile(output).catch(() => {
      throw new RenderError('Chromium produced no screenshot');
    });
  } finally {
    await proxy.close();
    await rm(dir, { recursive: true, force: true });
  }
}
