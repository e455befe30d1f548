import { beforeAll, describe, expect, it } from 'vitest';
import type { MarkupRecord } from '../../shared/db/items.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { patchMessage, postMessage } from '../support/conversations.js';
import { setPlan } from '../support/fixtures.js';
import { expectProblem } from '../support/problems.js';
import { createThread, delta, makeTypedMarkup, threadBody } from '../support/threads.js';
import { postFileMarkup, pngBytes } from '../support/uploads.js';

/** A number JavaScript cannot hold exactly (above 2^53), as JSON carries it. */
const HUGE = 2 ** 60;

/** 100 element parents at their longest: each field within its own bound, 800 KB together. */
const LARGE_PARENTS = Array.from({ length: 100 }, (_, depth) => ({
  url: `https://example.com/${'u'.repeat(2000)}`,
  canonicalUrl: `https://example.com/${'c'.repeat(2000)}`,
  path: 'p'.repeat(4096),
  depth,
}));

/** `{ a: { a: ... } }` nested `depth` levels, built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
}

/** A multipart body with one file part whose headers are exactly `partHeaders`. */
function rawForm(partHeaders: string, bytes: Buffer): { body: Buffer; contentType: string } {
  const boundary = 'bounds-test-boundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\n${partHeaders}\r\n\r\n`, 'utf8'),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

describe('valid or odd input is a 400 naming the field, never a 500 (Errors; issue 18 item 6)', () => {
  let org: Org;
  let webpage: MarkupRecord;
  let image: MarkupRecord;
  let thread: { id: string; messages: { id: string }[] };

  beforeAll(async () => {
    org = await makeOrganization();
    webpage = await makeTypedMarkup(org, 'webpage');
    image = await makeTypedMarkup(org, 'image');
    thread = await createThread(org.workspaceKey, webpage);
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
  });

  const postThread = (body: Record<string, unknown>) => call('POST', '/threads', { key: org.workspaceKey, body });

  it.each([
    ['startTime', () => threadBody(image, { startTime: HUGE }), '/body/startTime'],
    [
      'annotations.scale',
      () => threadBody(image, { annotations: { version: '1', scale: HUGE, originalWidth: 800, originalHeight: 600 } }),
      '/body/annotations/scale',
    ],
    [
      'elementParents[].depth',
      () =>
        threadBody(webpage, {
          elementParents: [{ url: 'https://example.com/', canonicalUrl: 'https://example.com/', path: 'html', depth: HUGE }],
        }),
      '/body/elementParents/0/depth',
    ],
    [
      'a Delta attribute',
      () => threadBody(webpage, { message: { ops: [{ insert: 'Big\n', attributes: { size: HUGE } }] } }),
      '/body/message/ops/0/attributes',
    ],
  ])('answers 400 for %s above 2^53', async (_name, body, pointer) => {
    expectProblem(await postThread(body()), 400, pointer);
  });

  it('answers 400 for a number too close to 0 for the table to store (1e-200)', async () => {
    expectProblem(await postThread(threadBody(image, { startTime: 1e-200 })), 400, '/body/startTime');
  });

  it.each([
    ['40 levels deep (DynamoDB nests at most 32)', 40],
    ['3,000 levels deep (deeper than a recursive walk survives)', 3000],
  ])('answers 400 for a Delta embed %s', async (_name, depth) => {
    const message = { ops: [{ insert: 'Deep ' }, { insert: nested(depth) }, { insert: '\n' }] };
    expectProblem(await postMessage(org.workspaceKey, thread.id, { message }), 400, '/body/message/ops/1/insert');
  });

  it('answers 400 for a Delta attribute with an empty key', async () => {
    const message = { ops: [{ insert: 'Odd\n', attributes: { '': 'value' } }] };

    expectProblem(await postMessage(org.workspaceKey, thread.id, { message }), 400, '/body/message/ops/0/attributes');
  });

  it('answers 400 for a message whose Delta exceeds what one message may store', async () => {
    const message = { ops: [...Array.from({ length: 30 }, () => ({ insert: 'x'.repeat(20_000) })), { insert: '\n' }] };

    expectProblem(await postMessage(org.workspaceKey, thread.id, { message }), 400, '/body/message');
  });

  it.each([
    ['POST /threads', () => postThread(threadBody(webpage, { elementParents: LARGE_PARENTS }))],
    [
      'PATCH /threads/:id/move-pin',
      () => call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { elementParents: LARGE_PARENTS } }),
    ],
  ])('answers 400 on %s for element parents larger than one thread may store', async (_name, send) => {
    expectProblem(await send(), 400, '/body/elementParents');
  });

  it.each([[[]], [null], [[[[]]]], ['text'], [42], [true]])(
    'answers 400 naming /body when the JSON body is %j, not an object',
    async (body) => {
      const settings = await call('PATCH', '/workspace/settings', {
        key: org.workspaceKey,
        rawBody: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
      });
      const edit = await call('PATCH', `/messages/${thread.messages[0]!.id}`, {
        key: org.workspaceKey,
        rawBody: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json' },
      });

      expectProblem(settings, 400, '/body');
      expectProblem(edit, 400, '/body');
    },
  );

  it('answers 400 for a 500 KB file name on POST /markups/file', async () => {
    const form = rawForm(
      `Content-Disposition: form-data; name="file"; filename="${'n'.repeat(500_000)}.png"\r\nContent-Type: image/png`,
      await pngBytes(),
    );

    const response = await postFileMarkup(
      org.workspaceKey,
      form.body as never,
      { workspaceId: org.workspaceId },
      { 'Content-Type': form.contentType },
    );

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.errors.map((error: { pointer: string }) => error.pointer)).toContain('/body/file/filename');
  });

  it('answers 400 for a part Content-Type with a non-ASCII character on POST /markups/file', async () => {
    const form = rawForm(
      'Content-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\u2713',
      await pngBytes(),
    );

    const response = await postFileMarkup(
      org.workspaceKey,
      form.body as never,
      { workspaceId: org.workspaceId },
      { 'Content-Type': form.contentType },
    );

    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.errors.map((error: { pointer: string }) => error.pointer)).toContain('/body/file/contentType');
  });

  it('still takes a valid thread, message and edit (the bounds leave ordinary input alone)', async () => {
    const created = await postThread(
      threadBody(image, { startTime: 12.5, annotations: { version: '1', scale: 1.5, originalWidth: 800, originalHeight: 600 } }),
    );
    const replied = await postMessage(org.workspaceKey, thread.id, {
      message: { ops: [{ insert: 'Bold', attributes: { bold: true, size: 14 } }, { insert: { mention: nested(5) } }, { insert: '\n' }] },
    });
    const edited = await patchMessage(org.workspaceKey, replied.body.data.id, { message: delta('Edited') });

    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(replied.status, JSON.stringify(replied.body)).toBe(200);
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
  });
});
