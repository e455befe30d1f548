import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderThumbnailJob } from '../../functions/thumbnail-renderer/render-thumbnail.js';
import { resetConfig } from '../../shared/config.js';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import { findChromium } from '../../shared/render/chromium.js';
import { call, localStack, makeOrganization } from '../support/api.js';
import { PLACEHOLDER_THUMBNAIL } from '../../shared/domain/markups/view.js';
import { makeMarkup, workspaceOf } from '../support/items.js';

const { services } = localStack();
const sqs = new SQSClient({ region: services.region, endpoint: services.endpoints.sqs, credentials: services.credentials });
const s3 = new S3Client({
  region: services.region,
  endpoint: services.endpoints.s3,
  forcePathStyle: true,
  credentials: services.credentials,
});
/**
 * CI always renders for real (.ci/run installs Chromium); a developer machine without it skips these.
 * The worker's own lookup decides (an executable, not merely a file at a known path), so a binary
 * hidden or not executable counts as missing here exactly as it does for the worker.
 */
const renderable = (await findChromium({ chromiumPath: process.env.CHROMIUM_PATH })) !== undefined || process.env.CI === 'true';
if (!renderable)
  console.warn('thumbnails: no Chromium found (apt-get install chromium, or set CHROMIUM_PATH): the rendering tests are skipped');
let site: Server;
let siteUrl: string;

beforeAll(async () => {
  site = createServer((request, response) => {
    if (request.url === '/missing') {
      response.writeHead(404).end('gone');
      return;
    }
    if (request.url === '/moved') {
      response.writeHead(302, { location: '/' }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body style="background:#c00"><h1>Hello</h1></body></html>');
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => site.close(resolve));
  sqs.destroy();
  s3.destroy();
});

async function renderThroughQueue(markup: MarkupRecord): Promise<MarkupRecord> {
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: services.queues.thumbnails.url,
      MessageBody: JSON.stringify({ type: 'render-thumbnail', markupId: markup.id }),
    }),
  );
  const deadline = Date.now() + 25_000;
  for (;;) {
    const current = (await getItem(markup.id, true)) as MarkupRecord;
    if (current.thumbnailState !== 'pending' || Date.now() > deadline) return current;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = Buffer.from(bytes);
  expect(view.subarray(1, 4).toString()).toBe('PNG');
  return { width: view.readUInt32BE(16), height: view.readUInt32BE(20) };
}

/** A webpage markup waiting for its thumbnail, written straight to the table. */
async function makeWebpageMarkupRecord(workspaceId: string, overrides: Partial<MarkupRecord> = {}): Promise<MarkupRecord> {
  const workspace = await workspaceOf(workspaceId);
  return makeMarkup({
    workspaceId,
    organizationId: workspace.organizationId,
    parentFolderId: workspace.rootFolderId,
    thumbnailState: 'pending',
    ...overrides,
  });
}

const record = (receiveCount: number) => ({ attributes: { ApproximateReceiveCount: String(receiveCount) } }) as unknown as SQSRecord;

describe('webpage thumbnails (conversion queue job render-thumbnail)', () => {
  it.runIf(renderable)(
    'renders the page with headless Chromium into a 640x400 PNG and marks the thumbnail ready',
    async () => {
      const org = await makeOrganization();
      const markup = await makeWebpageMarkupRecord(org.workspaceId, { url: `${siteUrl}/moved` });

      const done = await renderThroughQueue(markup);
      const object = await s3.send(new GetObjectCommand({ Bucket: services.bucketName, Key: done.thumbnailKey! }));

      expect(done.thumbnailState).toBe('ready');
      expect(object.ContentType).toBe('image/png');
      expect(pngSize(await object.Body!.transformToByteArray())).toEqual({ width: 640, height: 400 });
    },
    40_000,
  );

  it.runIf(renderable)(
    'leaves a clear placeholder reason when the page cannot be loaded or answers an error',
    async () => {
      const org = await makeOrganization();
      const refused = await makeWebpageMarkupRecord(org.workspaceId, { url: 'http://127.0.0.1:9/' });
      const missing = await makeWebpageMarkupRecord(org.workspaceId, { url: `${siteUrl}/missing` });

      const [a, b] = await Promise.all([renderThroughQueue(refused), renderThroughQueue(missing)]);

      expect(a.thumbnailState).toBe('unavailable');
      expect(a.thumbnailError).toMatch(/could not be loaded/);
      expect(b.thumbnailState).toBe('unavailable');
      expect(b.thumbnailError).toBe('The page answered HTTP 404.');
    },
    40_000,
  );

  it('marks the thumbnail unavailable, not stuck, on a stack without Chromium', async () => {
    const org = await makeOrganization();
    const markup = await makeWebpageMarkupRecord(org.workspaceId, { url: `${siteUrl}/` });
    process.env.CHROMIUM_PATH = '/nonexistent/chromium';
    resetConfig();
    try {
      await renderThumbnailJob.run({ type: 'render-thumbnail', markupId: markup.id }, record(1));
    } finally {
      delete process.env.CHROMIUM_PATH;
      resetConfig();
    }

    const after = (await getItem(markup.id, true)) as MarkupRecord;

    expect(after.thumbnailState).toBe('unavailable');
    expect(after.thumbnailError).toMatch(/No page renderer/);
  });

  it.runIf(renderable)('refuses loopback and private addresses on a deployed stack (no SSRF)', async () => {
    const org = await makeOrganization();
    const markup = await makeWebpageMarkupRecord(org.workspaceId, { url: `${siteUrl}/` });
    process.env.STACK_MODE = 'aws';
    resetConfig();
    try {
      await renderThumbnailJob.run({ type: 'render-thumbnail', markupId: markup.id }, record(1));
    } finally {
      process.env.STACK_MODE = 'local';
      resetConfig();
    }

    const after = (await getItem(markup.id, true)) as MarkupRecord;

    expect(after.thumbnailState).toBe('unavailable');
    expect(after.thumbnailError).toMatch(/loopback/);
  });

  it('does nothing for a markup that no longer exists (idempotent retries)', async () => {
    await expect(
      renderThumbnailJob.run({ type: 'render-thumbnail', markupId: '00000000-0000-4000-8000-000000000000' }, record(1)),
    ).resolves.toBeUndefined();
  });
});

describe('POST /markups/url schedules the thumbnail and thumbnailUrl serves it', () => {
  it.runIf(renderable)(
    'shows the placeholder first, then a thumbnailUrl that answers the PNG over a plain GET',
    async () => {
      const org = await makeOrganization();

      const created = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: `${siteUrl}/` } });
      let markup = created.body.data;
      const deadline = Date.now() + 25_000;
      while (markup.thumbnailUrl.startsWith('data:') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        markup = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data;
      }
      const image = await fetch(markup.thumbnailUrl);

      expect(created.body.data.thumbnailUrl).toBe(PLACEHOLDER_THUMBNAIL);
      expect(markup.thumbnailUrl).toMatch(/\/api\/v2\/markups\/[0-9a-f-]{36}\/thumbnail$/);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(pngSize(new Uint8Array(await image.arrayBuffer()))).toEqual({ width: 640, height: 400 });
    },
    40_000,
  );

  it('answers 404 for a markup without a rendered thumbnail and 400 for a malformed id', async () => {
    const org = await makeOrganization();
    const markup = await makeWebpageMarkupRecord(org.workspaceId, { thumbnailState: 'unavailable' });

    const missing = await call('GET', `/markups/${markup.id}/thumbnail`);
    const malformed = await call('GET', '/markups/not-an-id/thumbnail');

    expect(missing.status).toBe(404);
    expect(malformed.status).toBe(400);
  });
});
