import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../functions/webhook-delivery/post.js';
import { addressPolicy } from '../../shared/render/url-safety.js';

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/redirect') response.writeHead(302, { location: '/ok' }).end();
    else if (request.url === '/hang') request.resume();
    else if (request.url === '/big') response.writeHead(200).end(Buffer.alloc(1024 * 1024));
    else response.writeHead(request.url === '/gone' ? 410 : 200).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const local = { allowed: addressPolicy('local') };

describe('postWebhook', () => {
  it('answers the status, and reads a large body only up to its cap', async () => {
    expect(await postWebhook(`${base}/ok`, '{}', {}, local)).toEqual({ statusCode: 200 });
    expect(await postWebhook(`${base}/gone`, '{}', {}, local)).toEqual({ statusCode: 410 });
    expect(await postWebhook(`${base}/big`, '{}', {}, local)).toEqual({ statusCode: 200 });
  });

  it('does not follow redirects', async () => {
    expect(await postWebhook(`${base}/redirect`, '{}', {}, local)).toEqual({ statusCode: 302 });
  });

  it('cuts an attempt at its timeout', async () => {
    expect(await postWebhook(`${base}/hang`, '{}', {}, { ...local, timeoutMs: 200 })).toEqual({ error: 'timeout' });
  });

  it('refuses loopback, private, link-local and metadata targets deployed, without connecting', async () => {
    const deployed = { allowed: addressPolicy('aws') };
    for (const url of [
      `${base}/ok`,
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://0x7f000001/',
    ]) {
      const result = await postWebhook(url, '{}', {}, deployed);
      expect(result, url).toEqual({ error: expect.stringMatching(/private, loopback or link-local/) });
    }
  });

  it('reports a connection error without a status', async () => {
    expect(await postWebhook('http://127.0.0.1:9/hook', '{}', {}, local)).toEqual({ error: expect.stringMatching(/^connection: /) });
  });
  it('cuts an attempt whose DNS answer never comes at the same deadline as the request (the cut covers the lookup)', async () => {
    const started = performance.now();
    const stalled = () => new Promise<string[]>(() => undefined);
    expect(
      await postWebhook('https://hooks.example.com/x', '{}', {}, { allowed: addressPolicy('aws'), timeoutMs: 300, resolve: stalled }),
    ).toEqual({ error: 'timeout' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
