import { describe, expect, it } from 'vitest';
import { call, makeOrganization, type ApiResponse } from '../support/api.js';
import { missingId } from '../support/ids.js';
import { changeRole, freshEmail, invite, makeMember, removeUser } from '../support/members.js';
import { expectProblem } from '../support/problems.js';
import { createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

/**
 * The refusals issue 33 routed through one scope rule (`inScope`) and one access path per aggregate
 * (`resolveWorkspaceForMember`, `loadMarkups`), pinned where no other file checked them: each
 * status, problem type and detail exactly as before the refactor (27e27d4).
 */

const outOfScope = (response: ApiResponse, detail: string) => {
  expectProblem(response, 403);
  expect(response.body.type).toMatch(/workspace-out-of-scope$/);
  expect(response.body.detail).toBe(detail);
};

describe('member administration: the workspace a key names (resolveWorkspaceForMember)', () => {
  it('refuses a workspace key naming another workspace of its organization, before anything is read (403)', async () => {
    const org = await makeOrganization();
    const other = await makeSecondWorkspace(org.orgKey);
    const viewer = await makeMember(org.workspaceId, 'viewer');
    const detail = `This API key is scoped to workspace ${org.workspaceId} and cannot act on workspace ${other.id}.`;

    outOfScope(await changeRole(org.workspaceKey, viewer.userId, 'contributor', { workspaceId: other.id }), detail);
    outOfScope(await removeUser(org.workspaceKey, viewer.userId, { workspaceId: other.id }), detail);
    outOfScope(await invite(org.workspaceKey, { emails: [freshEmail()] }, { workspaceId: other.id }), detail);
  });

  it("refuses an organization key naming another organization's workspace (403) and an unknown one (404)", async () => {
    const org = await makeOrganization();
    const stranger = await makeOrganization();
    const viewer = await makeMember(stranger.workspaceId, 'viewer');

    outOfScope(
      await changeRole(org.orgKey, viewer.userId, 'contributor', { workspaceId: stranger.workspaceId }),
      `Workspace ${stranger.workspaceId} is not in this API key's organization.`,
    );
    outOfScope(
      await removeUser(org.orgKey, viewer.userId, { workspaceId: stranger.workspaceId }),
      `Workspace ${stranger.workspaceId} is not in this API key's organization.`,
    );
    expectProblem(await removeUser(org.orgKey, viewer.userId, { workspaceId: missingId }), 404);
    // A plain organization key reaches the workspace but has no verified email to invite with.
    const plain = await invite(org.orgKey, { emails: [freshEmail()] }, { workspaceId: org.workspaceId });
    expectProblem(plain, 403);
    expect(plain.body.type).toMatch(/verified-email-required$/);
  });
});

describe("bulk markup operations: another organization's markup (loadMarkups)", () => {
  it('refuses with 403 naming the first foreign markup, and changes nothing', async () => {
    const org = await makeOrganization();
    const stranger = await makeOrganization();
    const mine = await createMarkup(org.workspaceKey);
    const theirs = await createMarkup(stranger.workspaceKey);

    for (const key of [org.workspaceKey, org.orgKey]) {
      outOfScope(
        await call('POST', '/markups/bulk/delete', { key, body: { markupIds: [mine.id, theirs.id] } }),
        `Markup ${theirs.id} is not in this API key's organization.`,
      );
    }
    expect((await call('GET', `/markups/${mine.id}`, { key: org.workspaceKey })).status).toBe(200);
    expect((await call('GET', `/markups/${theirs.id}`, { key: stranger.workspaceKey })).status).toBe(200);
  });
});
