import { beforeAll, describe, expect, it } from 'vitest';
import { call, makeOrganization, type Org } from '../support/api.js';
import { UUID, missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { BROWSER_CONTEXT, DESKTOP, createThread, makeTypedMarkup } from '../support/threads.js';

describe('PATCH /threads/:id/move-pin (Thread record returned by move-pin)', () => {
  let org: Org;

  beforeAll(async () => {
    org = await makeOrganization();
  });

  it('moves a webpage pin to new elements and answers the webpage thread record', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const parents = [
      { url: 'https://example.com/pricing?plan=pro', canonicalUrl: 'https://example.com/pricing', path: 'html > body > main', depth: 2 },
    ];

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: {
        url: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
        elements: [{ elementPath: 'html > body > main > button', offsetXPercentage: 80, offsetYPercentage: 20 }],
        elementParents: parents,
        browserContext: { ...BROWSER_CONTEXT, viewportWidth: 1280 },
      },
    });

    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data).toEqual({
      id: thread.id,
      userId: org.workspaceKeyUserId,
      projectId: markup.id,
      number: 1,
      resolved: false,
      proxyHostId: expect.any(String),
      urlPath: '/pricing?plan=pro',
      canonicalUrl: 'https://example.com/pricing',
      viewModeId: DESKTOP,
    });
    const read = (await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data;
    expect(read).toMatchObject({
      proxyUrl: 'https://example.com/pricing?plan=pro',
      canonicalUrl: 'https://example.com/pricing',
      browserContext: { viewportWidth: 1280 },
    });
    expect(read.elements).toEqual([
      {
        id: expect.stringMatching(UUID),
        createdAt: expect.any(Number),
        modifiedAt: expect.any(Number),
        threadId: thread.id,
        path: 'html > body > main > button',
        offsetXPercentage: 80,
        offsetYPercentage: 20,
      },
    ]);
    expect(read.parents).toMatchObject([{ path: 'html > body > main', depth: 2, proxyUrl: parents[0]!.url }]);
    expect(read.modifiedAt).toBeGreaterThan(thread.modifiedAt);
  });

  it('moves an image pin to new offsets and answers the image thread record', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup, { projectImageId: markup.images![1]!.id, startTime: 2, endTime: 3 });

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: { viewportXPercentage: 70, viewportYPercentage: 80.5 },
    });

    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({
      id: thread.id,
      userId: org.workspaceKeyUserId,
      projectId: markup.id,
      number: 1,
      resolved: false,
      projectImageId: markup.images![1]!.id,
      offsetXPercentage: 70,
      offsetYPercentage: 80.5,
      startTime: 2,
      endTime: 3,
    });
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data).toMatchObject({
      offsetXPercentage: 70,
      offsetYPercentage: 80.5,
    });
  });

  it('moves a PDF pin and answers the PDF thread record', async () => {
    const markup = await makeTypedMarkup(org, 'pdf');
    const thread = await createThread(org.workspaceKey, markup, { pageNumber: 3 });
    await call('POST', `/threads/${thread.id}/resolve`, { key: org.workspaceKey });

    const moved = await call('PATCH', `/threads/${thread.id}/move-pin`, {
      key: org.workspaceKey,
      body: { viewportXPercentage: 5, viewportYPercentage: 95 },
    });

    expect(moved.status).toBe(200);
    expect(moved.body.data).toEqual({
      id: thread.id,
      userId: org.workspaceKeyUserId,
      projectId: markup.id,
      number: 1,
      resolved: true,
      pageNumber: 3,
      pageRelativeX: 5,
      pageRelativeY: 95,
    });
  });

  it('answers 400 for an image pin without both offsets or with one outside 0..100, and 403 to a viewer', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const thread = await createThread(org.workspaceKey, markup);
    const webpage = await makeTypedMarkup(org, 'webpage');
    const webThread = await createThread(org.workspaceKey, webpage);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    const oneOffset = await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: { viewportXPercentage: 10 } });
    expectProblem(oneOffset, 400);
    // Read by people: "An image pin", not "A image pin".
    expect(oneOffset.body.detail).toMatch(/^An image pin moves by offsets/);
    expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key: org.workspaceKey, body: {} }), 400);
    expectProblem(
      await call('PATCH', `/threads/${thread.id}/move-pin`, {
        key: org.workspaceKey,
        body: { viewportXPercentage: 10, viewportYPercentage: 101 },
      }),
      400,
      '/body/viewportYPercentage',
    );
    expectProblem(await call('PATCH', `/threads/${webThread.id}/move-pin`, { key: org.workspaceKey, body: {} }), 400);
    expectProblem(
      await call('PATCH', `/threads/${thread.id}/move-pin`, { key: viewer, body: { viewportXPercentage: 10, viewportYPercentage: 10 } }),
      403,
    );
    expectProblem(
      await call('PATCH', `/threads/${missingId}/move-pin`, {
        key: org.workspaceKey,
        body: { viewportXPercentage: 10, viewportYPercentage: 10 },
      }),
      404,
    );

    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).body.data).toMatchObject({
      offsetXPercentage: 25,
      offsetYPercentage: 40,
    });
  });
});
