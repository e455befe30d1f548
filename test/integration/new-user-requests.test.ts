import { describe, expect, it } from 'vitest';
import { INTERNAL_FAILURE_MESSAGE, markFailed, reopenDeadConversion } from '../../functions/conversion/markup-outcome.js';
import { OutputObjects } from '../../functions/conversion/objects.js';
import { getConfig } from '../../shared/config.js';
import { listEvents } from '../../shared/db/events.js';
import { getItem, toItem, type MarkupRecord } from '../../shared/db/items.js';
import { getStorageBreakdown } from '../../shared/db/storage.js';
import { transact } from '../../shared/db/core/transact.js';
import { chargeAdjustment, usagePeriod } from '../../shared/db/usage.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { conversionClients, makePendingMarkup, sendJob, waitUntilDrained, waitUntilReady } from '../support/conversion-jobs.js';
import { setPlan } from '../support/fixtures.js';
import { customerKeyPair } from '../support/installations.js';
import { eventually } from '../support/polling.js';
import { expectProblem } from '../support/problems.js';
import { corruptFile, randomFile } from '../support/sample-files.js';
import { delta, makeTypedMarkup } from '../support/threads.js';
import { fileForm, jpegBytes, pngBytes, postFileMarkup, readUploadRecord, uploadFile } from '../support/uploads.js';
import { LOOPBACK_HOOK_URL } from '../support/webhooks.js';

/**
 * What a new user sends, curl in hand, and what they must get (issue 28, item 10; DESIGN.md "Trust
 * rules added after the second security review").
 */

const WEBPAGE_FIELDS = ['url', 'canonicalUrl', 'elements', 'browserContext', 'elementParents', 'viewModeId'];

const postThread = (key: string, body: Record<string, unknown>) => call('POST', '/threads', { key, body });
const fromFiles = (key: string, body: Record<string, unknown>) => call('POST', '/markups/from-files', { key, body });

/** The fields a problem's `errors` names, with their details. */
const errorsOf = (body: { errors?: { pointer: string; detail: string }[] }) =>
  Object.fromEntries((body.errors ?? []).map((error) => [error.pointer, error.detail]));

describe('image, PDF and video threads need none of the webpage fields (DESIGN.md: Image, PDF and video threads)', () => {
  it.each([
    ['image', {}],
    ['pdf', { pageNumber: 2 }],
    ['video', { startTime: 3 }],
  ] as const)(
    'pins a %s thread from the fields its pin has, and answers and reads back the spec shape without webpage fields',
    async (type, extra) => {
      const org = await makeOrganization();
      const markup = await makeTypedMarkup(org, type);

      const created = await postThread(org.workspaceKey, {
        projectId: markup.id,
        isImageThread: true,
        offsetXPercentage: 10,
        offsetYPercentage: 20,
        message: delta('Look'),
        ...extra,
      });

      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const thread = created.body.data;
      expect(thread).toMatchObject({ projectId: markup.id, offsetXPercentage: 10, offsetYPercentage: 20, number: 1 });
      for (const field of [...WEBPAGE_FIELDS, 'parents', 'proxyUrl', 'originalUrl']) expect(thread).not.toHaveProperty(field);
      if (type === 'image') expect(thread).toMatchObject({ projectImageId: markup.images![0]!.id, startTime: 0, endTime: 0 });
      if (type === 'pdf') expect(thread).toMatchObject({ projectImageId: null, pageNumber: 2, textHighlight: null });
      if (type === 'video') expect(thread).toMatchObject({ projectImageId: null, startTime: 3, endTime: 3 });
      const read = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });
      expect(read.body.data).toEqual(thread);
    },
  );

  it('refuses a webpage thread without them with ONE 400 whose errors name each missing field "is required"', async () => {
    const org = await makeOrganization();
    const webpage = await makeTypedMarkup(org, 'webpage');

    const response = await postThread(org.workspaceKey, {
      projectId: webpage.id,
      isImageThread: false,
      offsetXPercentage: 10,
      offsetYPercentage: 20,
      message: delta('Look'),
    });

    expectProblem(response, 400);
    expect(errorsOf(response.body)).toEqual(
      Object.fromEntries(WEBPAGE_FIELDS.map((field) => [`/body/${field}`, 'is required on a webpage markup'])),
    );
    expect((await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: webpage.id } })).body.data.total).toBe(0);
  });
});

describe("a thread's first message may be plain text (DESIGN.md: content instead of message)", () => {
  it('takes content as replies do, storing the same text and Delta a message would', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');

    const response = await postThread(org.workspaceKey, {
      projectId: markup.id,
      isImageThread: true,
      offsetXPercentage: 1,
      offsetYPercentage: 2,
      content: 'Plain words',
    });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.messages).toEqual([
      expect.objectContaining({ content: 'Plain words', message: 'Plain words', messageJson: delta('Plain words') }),
    ]);
  });

  it('answers 400 for both content and message, and for neither, creating nothing', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'image');
    const pin = { projectId: markup.id, isImageThread: true, offsetXPercentage: 1, offsetYPercentage: 2 };

    const both = await postThread(org.workspaceKey, { ...pin, content: 'Look', message: delta('Look') });
    const neither = await postThread(org.workspaceKey, pin);

    expectProblem(both, 400, '/body/content');
    expect(errorsOf(both.body)['/body/content']).toMatch(/^must not be sent with message/);
    expectProblem(neither, 400, '/body/message');
    expect(errorsOf(neither.body)['/body/message']).toMatch(/^is required: .*message.*content/);
    expect((await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data.total).toBe(0);
  });
});

describe('a missing required field reads "is required" (DESIGN.md), on every operation', () => {
  it.each([
    ['POST /auth/exchange', () => call('POST', '/auth/exchange', { body: {} }), '/body/token'],
    [
      'POST /threads',
      (org: Org) => postThread(org.workspaceKey, { offsetXPercentage: 1, offsetYPercentage: 2, content: 'x' }),
      '/body/isImageThread',
    ],
    ['GET /threads', (org: Org) => call('GET', '/threads', { key: org.workspaceKey }), '/query/markupId'],
    ['POST /markups/from-files', (org: Org) => fromFiles(org.workspaceKey, {}), '/body/fileIds'],
  ] as const)('%s', async (_operation, send, pointer) => {
    const org = await makeOrganization();

    const response = await send(org);

    expectProblem(response, 400, pointer);
    expect(errorsOf(response.body)[pointer]).toBe('is required');
    expect(JSON.stringify(response.body)).not.toMatch(/Invalid type|received undefined/);
  });
});

describe('an image markup whose bytes do not decode as its declared type creates nothing (DESIGN.md: bytes that are not what they claim)', () => {
  /** Nothing of a refused creation is left: no markup, no usage, no event, no bytes beyond `storedBytes` (the uploads made before). */
  async function expectNothingCreated(org: Org, storedBytes: number) {
    const listed = await call('GET', '/markups', { key: org.workspaceKey });
    const usage = await call('GET', '/markups/usage', { key: org.workspaceKey });
    expect(listed.body.data.data).toEqual([]);
    expect(usage.body.data).toMatchObject({ used: 0, bundleUsed: 0 });
    expect((await listEvents(org.workspaceId)).filter((event) => event.type.startsWith('markup_'))).toEqual([]);
    expect((await getStorageBreakdown(org.organizationId)).total).toBe(storedBytes);
  }

  it.each([
    ['3,000 random bytes sent as image/png', async () => randomFile(3000), 'noise.png', 'image/png'],
    ['a JPEG sent as image/png', () => jpegBytes(), 'photo.png', 'image/png'],
    ['text sent as image/svg+xml', async () => Buffer.from('not an svg at all'), 'drawing.svg', 'image/svg+xml'],
  ])('refuses %s from confirmed uploads with a 400, leaving the upload unused', async (_case, bytes, filename, contentType) => {
    const org = await makeOrganization();
    const content = await bytes();
    const good = await uploadFile(org.workspaceKey, { bytes: await pngBytes(), filename: 'good.png', contentType: 'image/png' });
    const bad = await uploadFile(org.workspaceKey, { bytes: content, filename, contentType });
    const uploadedBytes = (await getStorageBreakdown(org.organizationId)).total;

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [good.fileId, bad.fileId] });

    expectProblem(response, 400);
    expect(response.body.type).toBe('urn:review-board:problem:file-not-decodable');
    expect(response.body.detail).toContain(bad.fileId);
    expect(await readUploadRecord(bad.fileId)).toMatchObject({ state: 'confirmed' });
    expect(await readUploadRecord(good.fileId)).toMatchObject({ state: 'confirmed' });
    await expectNothingCreated(org, uploadedBytes);
  });

  it('refuses them on the multipart create too, storing nothing', async () => {
    const org = await makeOrganization();

    const response = await postFileMarkup(org.workspaceKey, fileForm(randomFile(3000), 'noise.png', 'image/png'), {
      workspaceId: org.workspaceId,
    });

    expectProblem(response, 400);
    expect(response.body.type).toBe('urn:review-board:problem:file-not-decodable');
    await expectNothingCreated(org, 0);
  });

  it('still takes real images of every displayable type, an SVG sized by its viewer included', async () => {
    const org = await makeOrganization();
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>');
    const files = [
      await uploadFile(org.workspaceKey, { bytes: await pngBytes(3, 2), filename: 'a.png', contentType: 'image/png' }),
      await uploadFile(org.workspaceKey, { bytes: await jpegBytes(5, 2), filename: 'b.jpg', contentType: 'image/jpeg' }),
      await uploadFile(org.workspaceKey, { bytes: svg, filename: 'c.svg', contentType: 'image/svg+xml' }),
    ];

    const response = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: files.map((file) => file.fileId) });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.images.map((image: { width?: number }) => image.width)).toEqual([3, 5, undefined]);
  });
});

describe('a markup whose conversion fails does not count against the month (DESIGN.md)', () => {
  it('gives the allowance back once when a corrupt PDF fails, and keeps it so under redelivery and a dead letter', async () => {
    const org = await makeOrganization();
    const clients = conversionClients();
    const file = await uploadFile(org.workspaceKey, { bytes: corruptFile('pdf'), filename: 'broken.pdf', contentType: 'application/pdf' });

    const created = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const failed = await waitUntilReady(created.body.data.id, 60_000);
    const usedAfterFailure = (await call('GET', '/markups/usage', { key: org.workspaceKey })).body.data.used;
    await sendJob(clients, failed.id);
    await sendJob(clients, failed.id, 'deadLetters');
    await waitUntilDrained(clients, clients.services.queues.conversion.url, 30_000);
    await waitUntilDrained(clients, clients.services.queues.conversion.deadLetterUrl, 30_000);
    const afterRedelivery = (await call('GET', '/markups/usage', { key: org.workspaceKey })).body.data;

    expect(failed).toMatchObject({ conversionStatus: 'failed' });
    // Drawn from the allowance at creation (the markup's record of it; a usage read could come after the give-back).
    expect(failed.charge).toMatchObject({ fromAllowance: 1, fromBundle: 0 });
    expect(usedAfterFailure).toBe(0);
    expect(afterRedelivery).toMatchObject({ used: 0, bundleUsed: 0 });
    expect(await getItem(failed.id, true)).toMatchObject({ conversionStatus: 'failed' });
  });

  it('puts a markup drawn from the bundle back into the bundle', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 0, bundleBalance: 1 });
    const file = await uploadFile(org.workspaceKey, { bytes: corruptFile('pdf'), filename: 'broken.pdf', contentType: 'application/pdf' });

    const created = await fromFiles(org.workspaceKey, { workspaceId: org.workspaceId, fileIds: [file.fileId] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    await waitUntilReady(created.body.data.id, 60_000);
    const back = await eventually(
      async () => (await call('GET', '/markups/usage', { key: org.workspaceKey })).body.data,
      (usage) => usage.bundleUsed === 0,
    );

    // What the creation drew is the markup's own record of it: a read of the usage right after the
    // creation can come after the failed conversion already gave it back (a corrupt PDF fails fast).
    expect(((await getItem(created.body.data.id, true)) as MarkupRecord).charge).toMatchObject({
      workspaceId: org.workspaceId,
      fromAllowance: 0,
      fromBundle: 1,
    });
    expect(back).toMatchObject({ used: 0, bundleUsed: 0, bundleBalance: 1 });
  });
});

describe('the charge of a dead conversion: given back when it dies, taken again when a redrive reopens it (DESIGN.md)', () => {
  it('moves the month counter -1, +1, -1 through fail, reopen, fail, and not again for a repeated failure', async () => {
    const clients = conversionClients();
    const pdf = { type: 'pdf' as const, bytes: corruptFile('pdf'), filename: 'died.pdf', mimeType: 'application/pdf' };
    const { org, markup: bare } = await makePendingMarkup(clients, pdf, { hasRetainedOriginal: true });
    const charge = { workspaceId: org.workspaceId, periodKey: usagePeriod(new Date()).key, fromAllowance: 1, fromBundle: 0 };
    const markup: MarkupRecord = { ...bare, charge };
    await transact([
      { Put: { TableName: getConfig().tableName, Item: toItem(markup) } },
      ...chargeAdjustment(charge, org.organizationId, 1),
    ]);
    const used = async () => (await call('GET', '/markups/usage', { key: org.workspaceKey })).body.data.used;
    const failNow = async () =>
      markFailed((await getItem(markup.id, true)) as MarkupRecord, INTERNAL_FAILURE_MESSAGE, await OutputObjects.ofMarkup(markup.id));

    const charged = await used();
    await failNow();
    await failNow();
    const afterFailures = await used();
    const reopened = await reopenDeadConversion((await getItem(markup.id, true)) as MarkupRecord);
    const afterReopen = await used();
    await failNow();
    const afterSecondDeath = await used();

    expect(reopened).toMatchObject({ conversionStatus: 'pending' });
    expect([charged, afterFailures, afterReopen, afterSecondDeath]).toEqual([1, 0, 1, 0]);
  });
});

describe('workspaceId, where the spec marks it required, may be left out by a workspace key, not by an organization key (DESIGN.md)', () => {
  it('creates from files and from a multipart file in the key workspace, and answers 400 to an organization key', async () => {
    const org = await makeOrganization();
    const [first, second] = [
      await uploadFile(org.workspaceKey, { bytes: await pngBytes(), filename: 'a.png', contentType: 'image/png' }),
      await uploadFile(org.workspaceKey, { bytes: await pngBytes(), filename: 'b.png', contentType: 'image/png' }),
    ];

    const byWorkspaceKey = await fromFiles(org.workspaceKey, { fileIds: [first!.fileId] });
    const byOrgKey = await fromFiles(org.orgKey, { fileIds: [second!.fileId] });
    const multipartByWorkspaceKey = await postFileMarkup(org.workspaceKey, fileForm(await pngBytes(), 'c.png', 'image/png'), {});
    const multipartByOrgKey = await postFileMarkup(org.orgKey, fileForm(await pngBytes(), 'd.png', 'image/png'), {});

    expect(byWorkspaceKey.status, JSON.stringify(byWorkspaceKey.body)).toBe(200);
    expect(byWorkspaceKey.body.data).toMatchObject({ workspaceId: org.workspaceId, type: 'image' });
    expect(multipartByWorkspaceKey.status, JSON.stringify(multipartByWorkspaceKey.body)).toBe(200);
    expect(multipartByWorkspaceKey.body.data).toMatchObject({ workspaceId: org.workspaceId });
    for (const refused of [byOrgKey, multipartByOrgKey]) {
      expectProblem(refused, 400);
      expect(refused.body.type).toBe('urn:review-board:problem:workspace-id-required');
    }
    expect(await readUploadRecord(second!.fileId)).toMatchObject({ state: 'confirmed' });
  });

  it.each([
    ['GET /markups', { method: 'GET', path: '/markups' }],
    ['GET /markups/search', { method: 'GET', path: '/markups/search', query: { query: 'x' } }],
    ['GET /installations', { method: 'GET', path: '/installations' }],
    ['GET /webhook-registrations', { method: 'GET', path: '/webhook-registrations' }],
    ['POST /installations', { method: 'POST', path: '/installations', body: () => ({ signingKey: customerKeyPair().publicKey }) }],
    ['POST /webhook-registrations', { method: 'POST', path: '/webhook-registrations', body: () => ({ url: LOOPBACK_HOOK_URL }) }],
  ])(
    '%s follows the same rule',
    async (_operation, request: { method: string; path: string; query?: Record<string, string>; body?: () => Record<string, unknown> }) => {
      const org = await makeOrganization();

      const byWorkspaceKey = await call(request.method, request.path, {
        key: org.workspaceKey,
        query: request.query,
        body: request.body?.(),
      });
      const byOrgKey = await call(request.method, request.path, { key: org.orgKey, query: request.query, body: request.body?.() });

      expect(byWorkspaceKey.status, JSON.stringify(byWorkspaceKey.body)).toBe(200);
      expectProblem(byOrgKey, 400);
    },
  );
});
