import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/events.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { SCREENSHOT_THUMBNAIL_WIDTH } from '../../shared/convert/screenshots.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeMemberKey } from '../support/items.js';
import { createThread, makeTypedMarkup, pageCopiesOutOfStep } from '../support/threads.js';
import { pngBytes, postToStorage, uploadFile, type PolicyAnswer } from '../support/uploads.js';

type Org = Awaited<ReturnType<typeof makeOrganization>>;

/** A fresh organization (storage breakdown on) with a webpage markup and one thread on it. */
async function makeThreadFixture(): Promise<{ org: Org; markup: MarkupRecord; threadId: string }> {
  const org = await makeOrganization();
  await setPlan(org.organizationId, { storageFeatureEnabled: true });
  const markup = await makeTypedMarkup(org, 'webpage');
  const thread = await createThread(org.workspaceKey, markup);
  return { org, markup, threadId: thread.id as string };
}

interface FileSpec {
  bytes: Buffer;
  filename?: string;
  mimeType?: string;
  fileId?: string;
}

function requestScreenshotPolicy(key: string, threadId: string, file: FileSpec) {
  return call<{ data: Omit<PolicyAnswer, 'fileId' | 'acl' | 'directPut'>; [problemField: string]: any }>(
    'GET',
    `/threads/${threadId}/screenshot-upload-policy`,
    {
      key,
      query: {
        fileId: file.fileId,
        filename: file.filename ?? 'screenshot.png',
        mimeType: file.mimeType ?? 'image/png',
        filesize: file.bytes.length,
      },
    },
  );
}

/** Steps 1 and 2 of the screenshot flow: the policy, then the bytes posted to storage. Answers the PUT body. */
async function postScreenshot(key: string, threadId: string, file: FileSpec) {
  const policy = await requestScreenshotPolicy(key, threadId, file);
  expect(policy.status, JSON.stringify(policy.body)).toBe(200);
  const posted = await postToStorage(policy.body.data.policy, file.bytes, { filename: file.filename ?? 'screenshot.png' });
  expect(posted.status, posted.text).toBe(204);
  return {
    fileId: String(policy.body.data.metadata.fileId),
    key: policy.body.data.key,
    etag: posted.etag!,
    mimeType: file.mimeType ?? 'image/png',
    filesize: file.bytes.length,
    width: 1200,
    height: 800,
  };
}

function putScreenshot(key: string, threadId: string, body: Record<string, unknown>) {
  return call('PUT', `/threads/${threadId}/screenshot`, { key, body });
}

/** The whole flow: policy, post, PUT; answers the attached screenshot. */
async function attach(key: string, threadId: string, file: FileSpec, extra: Record<string, unknown> = {}) {
  const body = { ...(await postScreenshot(key, threadId, file)), ...extra };
  const attached = await putScreenshot(key, threadId, body);
  expect(attached.status, JSON.stringify(attached.body)).toBe(200);
  return { body, screenshot: attached.body.data };
}

/** Polls GET screenshot until the conversion worker is done with it (isProcessing false). */
async function waitUntilProcessed(key: string, threadId: string): Promise<any> {
  // A full run queues this job behind video and PDF conversions on a loaded machine: a minute, under the tests' 90 s.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await call('GET', `/threads/${threadId}/screenshot`, { key });
    expect(response.status).toBe(200);
    if (!response.body.data.isProcessing) return response.body.data;
    if (Date.now() > deadline)
      throw new Error(`screenshot of thread ${threadId} is still processing: ${JSON.stringify(response.body.data)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Polls a presigned link until storage no longer has the object (the deletion job ran). */
async function waitUntilGone(url: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status === 404) return;
    if (Date.now() > deadline) throw new Error(`object still stored: ${url}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function storedImageBytes(key: string): Promise<number> {
  const response = await call('GET', '/workspace/storage-breakdown', { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.images;
}

const problemOf = (response: { status: number; headers: Headers; body: any }) => ({
  status: response.status,
  contentType: response.headers.get('content-type'),
  type: response.body.type as string,
  detail: response.body.detail as string,
});

describe('screenshot flow: policy, post to storage, PUT screenshot, GET screenshot (Threads: Screenshot flow)', { timeout: 90_000 }, () => {
  it('attaches a posted screenshot, answers it processing, and the worker makes a thumbnail inside 400x300', async () => {
    const { org, markup, threadId } = await makeThreadFixture();
    const bytes = await pngBytes(1200, 800);

    const { screenshot } = await attach(org.workspaceKey, threadId, { bytes }, { type: 'extension', originalFilename: 'page.png' });
    const read = await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey });

    expect(screenshot).toMatchObject({
      mimeType: 'image/png',
      width: 1200,
      height: 800,
      filesize: bytes.length,
      type: 'extension',
      isProcessing: true,
    });
    expect(typeof screenshot.createdAt).toBe('number');
    expect(typeof screenshot.modifiedAt).toBe('number');
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ id: screenshot.id, createdAt: screenshot.createdAt, type: 'extension', filesize: bytes.length });
    expect(typeof read.body.data.isProcessing).toBe('boolean');
    expect(Buffer.from(await (await fetch(read.body.data.url)).arrayBuffer())).toEqual(bytes);

    const processed = await waitUntilProcessed(org.workspaceKey, threadId);
    const thumbnail = await fetch(processed.thumbnailUrl);
    const thumbnailBytes = Buffer.from(await thumbnail.arrayBuffer());

    expect(processed).toMatchObject({ id: screenshot.id, isProcessing: false });
    expect(processed.processingError).toBeUndefined();
    expect(processed.modifiedAt).toBeGreaterThanOrEqual(screenshot.modifiedAt);
    expect(thumbnail.status).toBe(200);
    // 1200x800 fitted inside the box keeps its 3:2 shape: the width fills it, the height stays under it.
    expect(await sharp(thumbnailBytes).metadata()).toMatchObject({ width: SCREENSHOT_THUMBNAIL_WIDTH, height: 267 });
    // The worker's write of the thread wrote its page copy too: a page shows the screenshot as settled.
    expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);
  });

  it('shows the thread as having a screenshot, and counts its bytes as images once', async () => {
    const { org, threadId } = await makeThreadFixture();
    const bytes = await pngBytes(40, 30);

    await attach(org.workspaceKey, threadId, { bytes });
    const thread = await call('GET', `/threads/${threadId}`, { key: org.workspaceKey });

    expect(thread.body.data.hasScreenshot).toBe(true);
    expect(await storedImageBytes(org.workspaceKey)).toBe(bytes.length);
  });

  it('answers the current screenshot when the same file is attached again, counting nothing twice', async () => {
    const { org, threadId } = await makeThreadFixture();
    const bytes = await pngBytes(30, 20);
    const { body, screenshot } = await attach(org.workspaceKey, threadId, { bytes });

    const again = await putScreenshot(org.workspaceKey, threadId, body);

    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.data).toMatchObject({ id: screenshot.id, createdAt: screenshot.createdAt, filesize: bytes.length });
    expect(await storedImageBytes(org.workspaceKey)).toBe(bytes.length);
  });

  it('lets a viewer read the screenshot', async () => {
    const { org, threadId } = await makeThreadFixture();
    const { screenshot } = await attach(org.workspaceKey, threadId, { bytes: await pngBytes() });
    const viewerKey = await makeMemberKey(org.workspaceId, 'viewer');

    const read = await call('GET', `/threads/${threadId}/screenshot`, { key: viewerKey });

    expect(read.status).toBe(200);
    expect(read.body.data.id).toBe(screenshot.id);
  });
});

describe('PUT screenshot replaces (Threads: "PUT attaches or replaces")', { timeout: 90_000 }, () => {
  it('replaces the screenshot, deletes the old file and counts only the new one in storage', async () => {
    const { org, threadId } = await makeThreadFixture();
    const first = await attach(org.workspaceKey, threadId, { bytes: await pngBytes(60, 40) });
    const firstDone = await waitUntilProcessed(org.workspaceKey, threadId);
    const second = await pngBytes(90, 70, { r: 1, g: 2, b: 3 });

    const replaced = await attach(org.workspaceKey, threadId, { bytes: second, filename: 'second.png' });

    expect(replaced.screenshot.id).not.toBe(first.screenshot.id);
    expect(replaced.screenshot).toMatchObject({ filesize: second.length, isProcessing: true });
    expect(await storedImageBytes(org.workspaceKey)).toBe(second.length);
    await waitUntilGone(first.screenshot.url);
    await waitUntilGone(firstDone.thumbnailUrl);
    const current = await waitUntilProcessed(org.workspaceKey, threadId);
    expect(current.id).toBe(replaced.screenshot.id);
    expect(Buffer.from(await (await fetch(current.url)).arrayBuffer())).toEqual(second);
    expect((await fetch(current.thumbnailUrl)).status).toBe(200);
  });

  it('refuses to attach a file again once it was replaced', async () => {
    const { org, threadId } = await makeThreadFixture();
    const first = await attach(org.workspaceKey, threadId, { bytes: await pngBytes(10, 10) });
    await attach(org.workspaceKey, threadId, { bytes: await pngBytes(11, 11) });

    const again = await putScreenshot(org.workspaceKey, threadId, first.body);

    expect(problemOf(again)).toMatchObject({ status: 400, type: expect.stringContaining('file-already-used') });
  });
});

describe('screenshot processing failure (Events: comment_screenshot_failed)', { timeout: 90_000 }, () => {
  it('ends a corrupt image with isProcessing false, a processingError and the comment_screenshot_failed event', async () => {
    const { org, markup, threadId } = await makeThreadFixture();

    await attach(org.workspaceKey, threadId, { bytes: Buffer.from('these bytes are not a PNG, whatever the type says') });
    const processed = await waitUntilProcessed(org.workspaceKey, threadId);
    const events = (await listEvents(org.workspaceId)).filter((event) => event.type === 'comment_screenshot_failed');

    expect(processed.isProcessing).toBe(false);
    expect(processed.processingError).toMatch(/could not be read as an image/);
    expect(processed.thumbnailUrl).toBeUndefined();
    expect(events).toEqual([expect.objectContaining({ markupId: markup.id, threadId })]);
    expect(await pageCopiesOutOfStep(markup.id)).toEqual([]);
  });
});

describe('DELETE /threads/:id with a screenshot', () => {
  it('takes the screenshot bytes off the storage counters and deletes its file', async () => {
    const { org, threadId } = await makeThreadFixture();
    const { screenshot } = await attach(org.workspaceKey, threadId, { bytes: await pngBytes(50, 50) });
    expect(await storedImageBytes(org.workspaceKey)).toBeGreaterThan(0);

    const deleted = await call('DELETE', `/threads/${threadId}`, { key: org.workspaceKey });

    expect(deleted.status).toBe(204);
    expect(await storedImageBytes(org.workspaceKey)).toBe(0);
    await waitUntilGone(screenshot.url);
    expect((await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey })).status).toBe(404);
  });
});

describe('GET /threads/:id/screenshot-upload-policy', () => {
  it('answers the presigned form with the file id and thread in metadata', async () => {
    const { org, threadId } = await makeThreadFixture();

    const policy = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(100) });

    expect(policy.status).toBe(200);
    expect(Object.keys(policy.body.data).sort()).toEqual(['bucket', 'key', 'metadata', 'policy']);
    expect(policy.body.data.policy).toEqual({
      url: expect.any(String),
      fields: expect.objectContaining({ key: policy.body.data.key, 'Content-Type': 'image/png' }),
    });
    expect(policy.body.data.metadata).toMatchObject({
      fileId: expect.any(String),
      threadId,
      resourceType: 'thread_screenshot',
      filesize: 100,
    });
  });

  it('uses the fileId the client chose, and refuses it with 409 once an upload has it', async () => {
    const { org, threadId } = await makeThreadFixture();
    const fileId = randomUUID();

    const first = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(10), fileId });
    const reused = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(10), fileId });

    expect(first.status).toBe(200);
    expect(first.body.data.metadata.fileId).toBe(fileId);
    expect(first.body.data.key).toContain(fileId);
    expect(problemOf(reused)).toMatchObject({ status: 409, detail: expect.stringContaining(fileId) });
  });

  it('refuses a fileId that is not a UUID with 400', async () => {
    const { org, threadId } = await makeThreadFixture();

    const response = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(10), fileId: 'mine' });

    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ pointer: '/query/fileId' })]);
  });

  it('refuses a file that is not an image with 400', async () => {
    const { org, threadId } = await makeThreadFixture();

    const response = await requestScreenshotPolicy(org.workspaceKey, threadId, {
      bytes: Buffer.alloc(10),
      filename: 'notes.txt',
      mimeType: 'text/plain',
    });

    expect(problemOf(response)).toMatchObject({
      status: 400,
      contentType: expect.stringContaining('application/problem+json'),
      detail: expect.stringContaining('text/plain'),
    });
  });

  it('refuses a type that is not a displayable image whatever the file is called, and takes a generic type for an image name', async () => {
    const { org, threadId } = await makeThreadFixture();
    const bytes = Buffer.alloc(25);
    for (const mimeType of ['text/html', 'application/javascript']) {
      const refused = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes, filename: 'a.png', mimeType });
      expect(refused.status, mimeType).toBe(400);
      expect(refused.body.type).toBe('urn:review-board:problem:unsupported-file-type');
    }
    for (const mimeType of ['application/octet-stream', 'image/png']) {
      expect((await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes, filename: 'a.png', mimeType })).status, mimeType).toBe(
        200,
      );
    }
  });

  it('refuses a missing filesize with 400', async () => {
    const { org, threadId } = await makeThreadFixture();

    const response = await call('GET', `/threads/${threadId}/screenshot-upload-policy`, {
      key: org.workspaceKey,
      query: { filename: 'a.png', mimeType: 'image/png' },
    });

    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ pointer: '/query/filesize' })]);
  });

  it("answers 402 when the file does not fit the plan's storage", async () => {
    const { org, threadId } = await makeThreadFixture();
    await setPlan(org.organizationId, { storageLimitBytes: 50 });

    const response = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(100) });

    expect(response.status).toBe(402);
  });
});

describe('screenshot access (Threads: contributor writes, viewer reads)', () => {
  it('answers 404 for an unknown thread on every screenshot operation', async () => {
    const org = await makeOrganization();
    const threadId = randomUUID();

    const policy = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(10) });
    const put = await putScreenshot(org.workspaceKey, threadId, {
      fileId: randomUUID(),
      key: 'k',
      etag: '"e"',
      mimeType: 'image/png',
      width: 1,
      height: 1,
      filesize: 10,
    });
    const get = await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey });

    expect([policy.status, put.status, get.status]).toEqual([404, 404, 404]);
    expect(get.body.detail).toContain(threadId);
  });

  it('answers 404 with a problem when the thread has no screenshot', async () => {
    const { org, threadId } = await makeThreadFixture();

    const response = await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey });

    expect(problemOf(response)).toMatchObject({
      status: 404,
      contentType: expect.stringContaining('application/problem+json'),
      detail: expect.stringContaining('no screenshot'),
    });
  });

  it('refuses a viewer the policy and the attach with 403', async () => {
    const { org, threadId } = await makeThreadFixture();
    const body = await postScreenshot(org.workspaceKey, threadId, { bytes: await pngBytes() });
    const viewerKey = await makeMemberKey(org.workspaceId, 'viewer');

    const policy = await requestScreenshotPolicy(viewerKey, threadId, { bytes: Buffer.alloc(10) });
    const put = await putScreenshot(viewerKey, threadId, body);

    expect(policy.status).toBe(403);
    expect(put.status).toBe(403);
    expect((await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey })).status).toBe(404);
  });

  it('lets a contributor attach', async () => {
    const { org, threadId } = await makeThreadFixture();
    const contributorKey = await makeMemberKey(org.workspaceId, 'contributor');

    const { screenshot } = await attach(contributorKey, threadId, { bytes: await pngBytes() });

    expect(screenshot.type).toBe('static');
  });

  it("refuses another organization's key with 403", async () => {
    const { threadId } = await makeThreadFixture();
    const stranger = await makeOrganization();

    const response = await call('GET', `/threads/${threadId}/screenshot`, { key: stranger.workspaceKey });

    expect(response.status).toBe(403);
  });
});

describe('PUT screenshot refuses files it cannot attach (400)', () => {
  it("refuses the upload of another markup's thread", async () => {
    const { org, threadId } = await makeThreadFixture();
    const otherMarkup = await makeTypedMarkup(org, 'webpage');
    const otherThread = await createThread(org.workspaceKey, otherMarkup);
    const body = await postScreenshot(org.workspaceKey, otherThread.id, { bytes: await pngBytes() });

    const response = await putScreenshot(org.workspaceKey, threadId, body);

    expect(problemOf(response)).toMatchObject({ status: 400, type: expect.stringContaining('wrong-resource') });
  });

  it('refuses a message attachment upload of the same markup', async () => {
    const { org, markup, threadId } = await makeThreadFixture();
    const bytes = await pngBytes();
    const uploaded = await uploadFile(org.workspaceKey, {
      resourceType: 'message_attachment',
      resourceId: markup.id,
      filename: 'a.png',
      contentType: 'image/png',
      bytes,
    });

    const response = await putScreenshot(org.workspaceKey, threadId, {
      fileId: uploaded.fileId,
      key: uploaded.policy.key,
      etag: uploaded.etag,
      mimeType: 'image/png',
      filesize: bytes.length,
      width: 4,
      height: 3,
    });

    expect(problemOf(response)).toMatchObject({ status: 400, type: expect.stringContaining('wrong-resource') });
  });

  it('refuses a file already attached to another thread', async () => {
    const { org, markup, threadId } = await makeThreadFixture();
    const otherThread = await createThread(org.workspaceKey, markup);
    const { body } = await attach(org.workspaceKey, otherThread.id, { bytes: await pngBytes() });

    const response = await putScreenshot(org.workspaceKey, threadId, body);

    expect(problemOf(response)).toMatchObject({ status: 400, type: expect.stringContaining('file-already-used') });
    expect((await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey })).status).toBe(404);
  });

  it('refuses an unknown fileId', async () => {
    const { org, threadId } = await makeThreadFixture();

    const response = await putScreenshot(org.workspaceKey, threadId, {
      fileId: randomUUID(),
      key: 'uploads/x',
      etag: '"e"',
      mimeType: 'image/png',
      width: 1,
      height: 1,
      filesize: 10,
    });

    expect(problemOf(response)).toMatchObject({ status: 400, type: expect.stringContaining('unknown-file') });
  });

  it('refuses a file that was never posted to storage', async () => {
    const { org, threadId } = await makeThreadFixture();
    const policy = await requestScreenshotPolicy(org.workspaceKey, threadId, { bytes: Buffer.alloc(64) });

    const response = await putScreenshot(org.workspaceKey, threadId, {
      fileId: policy.body.data.metadata.fileId,
      key: policy.body.data.key,
      etag: '"0123456789abcdef0123456789abcdef"',
      mimeType: 'image/png',
      filesize: 64,
      width: 8,
      height: 8,
    });

    expect(problemOf(response)).toMatchObject({ status: 400, type: expect.stringContaining('upload-not-landed') });
  });

  it('refuses a body whose key, type or size is not that of the upload, naming each field', async () => {
    const { org, threadId } = await makeThreadFixture();
    const body = await postScreenshot(org.workspaceKey, threadId, { bytes: await pngBytes() });

    const response = await putScreenshot(org.workspaceKey, threadId, {
      ...body,
      key: `${body.key}.other`,
      mimeType: 'image/jpeg',
      filesize: body.filesize + 1,
    });

    expect(response.status).toBe(400);
    expect(response.body.errors.map((error: { pointer: string }) => error.pointer).sort()).toEqual([
      '/body/filesize',
      '/body/key',
      '/body/mimeType',
    ]);
    expect(response.body.detail).toContain(body.fileId);
  });

  it('refuses an ETag that is not the stored object’s', async () => {
    const { org, threadId } = await makeThreadFixture();
    const body = await postScreenshot(org.workspaceKey, threadId, { bytes: await pngBytes() });

    const response = await putScreenshot(org.workspaceKey, threadId, { ...body, etag: '"ffffffffffffffffffffffffffffffff"' });

    expect(problemOf(response)).toMatchObject({ status: 400, type: expect.stringContaining('upload-mismatch') });
    expect((await call('GET', `/threads/${threadId}/screenshot`, { key: org.workspaceKey })).status).toBe(404);
  });

  it('refuses an unknown screenshot type and missing fields with validation errors', async () => {
    const { org, threadId } = await makeThreadFixture();

    const response = await putScreenshot(org.workspaceKey, threadId, { fileId: randomUUID(), type: 'photo' });

    expect(response.status).toBe(400);
    expect(response.body.errors.map((error: { pointer: string }) => error.pointer)).toEqual(
      expect.arrayContaining(['/body/type', '/body/key', '/body/etag', '/body/width']),
    );
  });
});
