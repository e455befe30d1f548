import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuardedProxy, type GuardedProxy } from '../../shared/render/guarded-proxy.js';

/**
 * The proxy Chromium renders through, without Chromium (so machines without it still test it):
 * plain requests and CONNECT tunnels reach only addresses the guard allows, and a name is checked
 * and connected to by the one address it resolved to, so rebinding cannot slip past.
 */
let allowedSite: Server;
let secret: Server;
let proxy: GuardedProxy;
let allowedPort: number;
let secretPort: number;
let secretConnections = 0;
let rebinds = 0;

beforeAll(async () => {
  allowedSite = createServer((request, response) => response.end(`allowed ${request.url}`));
  secret = createServer((_request, response) => response.end('secret'));
  secret.on('connection', () => (secretConnections += 1));
  await new Promise<void>((resolve) => allowedSite.listen(0, '127.0.0.2', resolve));
  await new Promise<void>((resolve) => secret.listen(0, '127.0.0.1', resolve));
  allowedPort = (allowedSite.address() as AddressInfo).port;
  secretPort = (secret.address() as AddressInfo).port;
  proxy = await startGuardedProxy({
    allowed: (address) => address === '127.0.0.2',
    resolve: async (host) => {
      if (host === 'ok.test') return ['127.0.0.2'];
      if (host === 'bad.test') return ['127.0.0.1'];
      if (host === 'mixed.test') return ['127.0.0.2', '127.0.0.1'];
      if (host === 'rebind.test') return [rebinds++ === 0 ? '127.0.0.2' : '127.0.0.1'];
      throw new Error('unknown');
    },
  });
});

afterAll(async () => {
  await proxy.close();
  await Promise.all([new Promise((resolve) => allowedSite.close(resolve)), new Promise((resolve) => secret.close(resolve))]);
});

/** A GET in proxy form, as Chromium sends plain-HTTP requests to its proxy. */
function viaProxy(target: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: target, headers: { host: new URL(target).host } }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

/** A CONNECT tunnel, then one plain GET through it; the status line of the CONNECT answer and the body. */
function viaTunnel(authority: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, method: 'CONNECT', path: authority });
    request.on('connect', (response, socket: Socket) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        resolve({ status: response.statusCode ?? 0, body: '' });
        return;
      }
      let body = '';
      socket.on('data', (chunk: Buffer) => (body += chunk.toString()));
      socket.on('end', () => resolve({ status: 200, body }));
      socket.write(`GET /tunnelled HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
    });
    request.on('error', reject);
    request.end();
  });
}

describe('the renderer proxy connects only to addresses the guard allows', () => {
  it('forwards a plain request to an allowed name and refuses loopback by name, literal or any notation', async () => {
    const ok = await viaProxy(`http://ok.test:${allowedPort}/page`);
    const refused = await Promise.all(
      ['bad.test', 'mixed.test', '127.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '2130706433', '0x7f.1', '[64:ff9b::7f00:1]'].map(
        (host) => viaProxy(`http://${host}:${secretPort}/`),
      ),
    );

    expect(ok).toEqual({ status: 200, body: 'allowed /page' });
    expect(refused.map((answer) => answer.status)).toEqual(Array(8).fill(403));
    expect(secretConnections).toBe(0);
  });

  it('opens CONNECT tunnels (https, websockets) only to allowed addresses', async () => {
    const ok = await viaTunnel(`ok.test:${allowedPort}`);
    const refused = await Promise.all([`bad.test:${secretPort}`, `127.0.0.1:${secretPort}`, `[::1]:${secretPort}`].map(viaTunnel));

    expect(ok.status).toBe(200);
    expect(ok.body).toContain('allowed /tunnelled');
    expect(refused.map((answer) => answer.status)).toEqual([403, 403, 403]);
    expect(secretConnections).toBe(0);
  });

  it('resolves a rebinding name afresh for each request and refuses it once it points inside', async () => {
    const first = await viaProxy(`http://rebind.test:${allowedPort}/first`);
    const second = await viaProxy(`http://rebind.test:${allowedPort}/second`);

    expect(first).toEqual({ status: 200, body: 'allowed /first' });
    expect(second.status).toBe(403);
    // Refused for what the name resolves to now, without naming the address (DESIGN.md: no resolved IP is shown).
    expect(proxy.refused.some((entry) => entry.startsWith('rebind.test') && entry.includes('private, loopback or link-local'))).toBe(true);
    expect(proxy.refused.some((entry) => entry.startsWith('rebind.test') && entry.includes('127.0.0.1'))).toBe(false);
  });
});
