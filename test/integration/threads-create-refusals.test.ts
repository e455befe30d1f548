import { beforeAll, describe, expect, it } from 'vitest';
import type { MarkupRecord } from '../../shared/db/items.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { makeEndUser } from '../support/end-users.js';
import { expectProblem } from '../support/problems.js';
import { listThreads, markupOf } from '../support/thread-reads.js';
import { delta, makeTypedMarkup, threadBody } from '../support/threads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/** Every field of `body` but `field`. */
function without(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const { [field]: _dropped, ...rest } = body;
  return rest;
}

describe('POST /threads refusals (Errors; problem+json)', () => {
  let org: Org;
  let webpage: MarkupRecord;

  beforeAll(async () => {
    org = await makeOrganization();
    webpage = await makeTypedMarkup(org, 'webpage');
  });

  async function post(body: Record<string, unknown>, key: string | null = org.workspaceKey) {
    return call('POST', '/threads', { key, body });
  }

  it.each([
    'isImageThread',
    'url',
    'canonicalUrl',
    'elements',
    'offsetXPercentage',
    'offsetYPercentage',
    'message',
    'browserContext',
    'elementParents',
    'viewModeId',
  ])('answers 400 naming /body/%s when that required field is missing', async (field) => {
    expectProblem(await post(without(threadBody(webpage), field)), 400, `/body/${field}`);
  });

  it.each([
    ['offsetXPercentage', { offsetXPercentage: -0.5 }, '/body/offsetXPercentage'],
    ['offsetYPercentage', { offsetYPercentage: 100.5 }, '/body/offsetYPercentage'],
    [
      'an element offset',
      { elements: [{ elementPath: 'html', offsetXPercentage: 10, offsetYPercentage: 150 }] },
      '/body/elements/0/offsetYPercentage',
    ],
  ])('answers 400 for %s outside 0..100', async (_name, overrides, pointer) => {
    expectProblem(await post(threadBody(webpage, overrides)), 400, pointer);
  });

  it('answers 400 when isImageThread does not match the markup type', async () => {
    const image = await makeTypedMarkup(org, 'image');

    expectProblem(await post(threadBody(webpage, { isImageThread: true })), 400, '/body/isImageThread');
    const onImage = await post(threadBody(image, { isImageThread: false }));
    expectProblem(onImage, 400, '/body/isImageThread');
    expect(onImage.body.errors).toContainEqual(
      expect.objectContaining({ pointer: '/body/isImageThread', detail: expect.stringMatching(/^must be true on an image markup/) }),
    );
  });

  it('answers 400 for a viewModeId that is not one of the webpage view modes', async () => {
    expectProblem(await post(threadBody(webpage, { viewModeId: missingId })), 400, '/body/viewModeId');
  });

  it('answers 400 for a projectImageId that is not an image of the markup', async () => {
    const image = await makeTypedMarkup(org, 'image');
    const other = await makeTypedMarkup(org, 'image');

    expectProblem(await post(threadBody(image, { projectImageId: other.images![0]!.id })), 400, '/body/projectImageId');
  });

  it('answers 400 for a PDF thread without pageNumber or beyond the last page', async () => {
    const pdf = await makeTypedMarkup(org, 'pdf');

    expectProblem(await post(without(threadBody(pdf), 'pageNumber')), 400, '/body/pageNumber');
    expectProblem(await post(threadBody(pdf, { pageNumber: 4 })), 400, '/body/pageNumber');
    expectProblem(await post(threadBody(pdf, { pageNumber: 0 })), 400, '/body/pageNumber');
    expect((await post(threadBody(pdf, { pageNumber: 3 }))).status).toBe(200);
  });

  it('answers 400 for a video time beyond its duration or an endTime before the startTime', async () => {
    const video = await makeTypedMarkup(org, 'video');

    expectProblem(await post(threadBody(video, { startTime: 31 })), 400, '/body/startTime');
    expectProblem(await post(threadBody(video, { startTime: 10, endTime: 31 })), 400, '/body/endTime');
    expectProblem(await post(threadBody(video, { startTime: 10, endTime: 5 })), 400, '/body/endTime');
    expectProblem(await post(threadBody(video, { endTime: 5 })), 400, '/body/endTime');
    expect((await post(threadBody(video, { startTime: 30, endTime: 30 }))).status).toBe(200);
  });

  it('answers 400 for a message that says nothing', async () => {
    expectProblem(await post(threadBody(webpage, { message: delta('') })), 400, '/body/message');
    expectProblem(await post(threadBody(webpage, { message: { ops: [] } })), 400, '/body/message');
  });

  it('answers 400 naming /body/projectId when the markup is not named, unless the token is bound to one markup, whose thread it then is', async () => {
    expectProblem(await post(without(threadBody(webpage), 'projectId')), 400, '/body/projectId');
    const unbound = await makeEndUser({ organizationId: org.organizationId, workspaceId: org.workspaceId });
    expectProblem(await post(without(threadBody(webpage), 'projectId'), unbound.token), 400, '/body/projectId');
    const bound = await makeEndUser({ organizationId: org.organizationId, workspaceId: org.workspaceId, markupId: webpage.id });
    const created = await post(without(threadBody(webpage), 'projectId'), bound.token);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.data.projectId).toBe(webpage.id);
  });

  it('answers 404 for an unknown markup', async () => {
    expectProblem(await post(threadBody(webpage, { projectId: missingId })), 404);
  });

  it("answers 403 for a markup of another organization and for another workspace's markup", async () => {
    const stranger = await makeOrganization();
    const foreign = await makeTypedMarkup(stranger, 'webpage');
    const workspace = await makeSecondWorkspace(org.orgKey, 'Second');
    const besideIt = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: workspace.id }, 'webpage');

    expectProblem(await post(threadBody(foreign)), 403);
    expectProblem(await post(threadBody(foreign), org.orgKey), 403);
    expectProblem(await post(threadBody(besideIt)), 403);
    expect((await post(threadBody(besideIt), org.orgKey)).status).toBe(200);
  });

  it('answers 403 to a viewer and 401 without a key, and creates nothing', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    expectProblem(await post(threadBody(markup), viewer), 403);
    expectProblem(await post(threadBody(markup), null), 401);

    expect((await listThreads(org.workspaceKey, { markupId: markup.id })).total).toBe(0);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(0);
  });

  it('refuses threads with 403 markup-read-only while comments are paused, and takes them again once resumed', async () => {
    const markup = await makeTypedMarkup(org, 'webpage');
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    expect((await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } })).status).toBe(200);

    const paused = await post(threadBody(markup));
    expect((await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } })).status).toBe(200);
    const resumed = await post(threadBody(markup));

    expectProblem(paused, 403);
    expect(paused.body.type).toMatch(/markup-read-only$/);
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.number).toBe(1);
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(1);
  });

  it('answers 409 while the markup is still being converted (isReady false)', async () => {
    const video = await makeTypedMarkup(org, 'video', { isReady: false, video: undefined });
    const image = await makeTypedMarkup(org, 'image', { isReady: false, images: [] });

    expectProblem(await post(threadBody(video)), 409);
    expectProblem(await post(threadBody(image)), 409);
  });
});
