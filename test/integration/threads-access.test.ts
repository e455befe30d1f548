import { describe, expect, it } from 'vitest';
import { call, makeOrganization } from '../support/api.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { createThread, makeTypedMarkup } from '../support/threads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe("one thread by id outside the key's reach (Authentication)", () => {
  it('answers 403 to a key of another organization or of another workspace, on every operation of a thread', async () => {
    const org = await makeOrganization();
    const stranger = await makeOrganization();
    const workspace = await makeSecondWorkspace(org.orgKey, 'Second');
    const markup = await makeTypedMarkup({ organizationId: org.organizationId, workspaceId: workspace.id }, 'image');
    const thread = await createThread(org.orgKey, markup);
    const pin = { viewportXPercentage: 1, viewportYPercentage: 1 };

    for (const key of [stranger.workspaceKey, stranger.orgKey, org.workspaceKey]) {
      expectProblem(await call('GET', `/threads/${thread.id}`, { key }), 403);
      expectProblem(await call('POST', `/threads/${thread.id}/resolve`, { key }), 403);
      expectProblem(await call('POST', `/threads/${thread.id}/unresolve`, { key }), 403);
      expectProblem(await call('PATCH', `/threads/${thread.id}/move-pin`, { key, body: pin }), 403);
      expectProblem(await call('DELETE', `/threads/${thread.id}`, { key }), 403);
      expectProblem(await call('GET', '/threads', { key, query: { markupId: markup.id } }), 403);
    }

    const unchanged = await call('GET', `/threads/${thread.id}`, { key: org.orgKey });
    expect(unchanged.body.data).toMatchObject({ resolved: false, offsetXPercentage: 25, offsetYPercentage: 40 });
  });

  it('shows a viewer the thread with view-thread as its only scope, and refuses it the delete', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    const seen = await call('GET', `/threads/${thread.id}`, { key: viewer });
    const deleted = await call('DELETE', `/threads/${thread.id}`, { key: viewer });

    expect(seen.status).toBe(200);
    expect(seen.body.data.scopes).toEqual(['view-thread']);
    expect(seen.body.data.messages[0].scopes).toEqual(['view-message']);
    expectProblem(deleted, 403);
    expect((await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey })).status).toBe(200);
  });
});
