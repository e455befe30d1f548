import { describe, expect, it } from 'vitest';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { createMarkup } from '../support/url-markups.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('GET /markups/:id (files always included)', () => {
  it('answers the markup as created', async () => {
    const org = await makeOrganization();
    const created = await createMarkup(org.workspaceKey, { name: 'Landing' });

    const response = await call('GET', `/markups/${created.id}`, { key: org.workspaceKey });

    expect(response.status).toBe(200);
    // The single read adds each view mode's page screenshot (pending, or already settled by the worker).
    expect(response.body.data).toEqual({ ...created, pageScreenshots: expect.any(Array) });
    expect(response.body.data.pageScreenshots.map((shot: { viewModeId: string }) => shot.viewModeId)).toEqual(
      VIEW_MODES.map((mode) => mode.id),
    );
  });

  it('answers 404 for an unknown id and a folder id, 400 for an id that is not a UUID', async () => {
    const org = await makeOrganization();
    const workspace = (await getWorkspace(org.workspaceId))!;

    const unknown = await call('GET', `/markups/${missingId}`, { key: org.workspaceKey });
    const folder = await call('GET', `/markups/${workspace.rootFolderId}`, { key: org.workspaceKey });
    const malformed = await call('GET', '/markups/not-a-uuid', { key: org.workspaceKey });

    expect(unknown.status).toBe(404);
    expect(folder.status).toBe(404);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].pointer).toBe('/params/id');
  });

  it("answers 403 for a markup outside the key's scope: another workspace for a workspace key, another organization for any key", async () => {
    const [org, stranger] = await Promise.all([makeOrganization(), makeOrganization()]);
    const other = await makeSecondWorkspace(org.orgKey, 'Second');
    const elsewhere = await createMarkup(org.orgKey, { workspaceId: other.id });
    const foreign = await createMarkup(stranger.workspaceKey);

    const sibling = await call('GET', `/markups/${elsewhere.id}`, { key: org.workspaceKey });
    const viaOrgKey = await call('GET', `/markups/${elsewhere.id}`, { key: org.orgKey });
    const otherOrg = await call('GET', `/markups/${foreign.id}`, { key: org.orgKey });

    expect(sibling.status).toBe(403);
    expect(viaOrgKey.status).toBe(200);
    expect(otherOrg.status).toBe(403);
  });

  it('reports scopes for what the caller can do: a viewer only views', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('GET', `/markups/${markup.id}`, { key: await makeMemberKey(org.workspaceId, 'viewer') });

    expect(response.status).toBe(200);
    expect(response.body.data.scopes).toEqual(['view-project']);
  });
});

describe('POST /markups/:id (rename)', () => {
  it('renames the markup and moves modifiedAt forward', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: { name: '  Homepage v2 ' } });

    expect(response.status).toBe(200);
    expect(response.body.data.name).toBe('Homepage v2');
    expect(Date.parse(response.body.data.modifiedAt)).toBeGreaterThan(Date.parse(markup.modifiedAt as string));
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name).toBe('Homepage v2');
  });

  it('answers 400 without a name, 404 for an unknown markup and 403 for a viewer', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const noName = await call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: {} });
    const unknown = await call('POST', `/markups/${missingId}`, { key: org.workspaceKey, body: { name: 'x' } });
    const viewer = await call('POST', `/markups/${markup.id}`, {
      key: await makeMemberKey(org.workspaceId, 'viewer'),
      body: { name: 'x' },
    });

    expect(noName.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(viewer.status).toBe(403);
  });

  it('keeps both renames of concurrent requests consistent: the markup ends with one of the names', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);
    const names = Array.from({ length: 8 }, (_, i) => `Name ${i}`);

    const responses = await Promise.all(
      names.map((name) => call('POST', `/markups/${markup.id}`, { key: org.workspaceKey, body: { name } })),
    );

    expect(responses.every((response) => response.status === 200 || response.status === 409)).toBe(true);
    const final = (await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.name;
    expect(names).toContain(final);
    const search = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: final } });
    expect(search.body.data.data.map((found: { id: string }) => found.id)).toEqual([markup.id]);
  });
});

describe('DELETE /markups/:id', () => {
  it('answers 204 and the markup is gone from reads, the list and search', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey, { name: 'Doomed' });

    const response = await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey });

    expect(response.status).toBe(204);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(404);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data.data).toEqual([]);
    expect((await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'doomed' } })).body.data.data).toEqual([]);
    expect((await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(404);
  });

  it('refuses a contributor with 403 (deleting needs admin) and keeps the markup', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('DELETE', `/markups/${markup.id}`, { key: await makeMemberKey(org.workspaceId, 'contributor') });

    expect(response.status).toBe(403);
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).status).toBe(200);
  });
});

describe('PATCH /markups/:id/read-only (States and transitions: readOnly)', () => {
  it('refuses pausing comments without the plan feature with 403 feature-not-enabled', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });

    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ type: 'urn:review-board:problem:feature-not-enabled', feature: 'pauseComments' });
    expect((await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey })).body.data.readOnly).toBe(false);
  });

  it('pauses comments with the feature, reflects it in scopes, and always allows resuming', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const markup = await createMarkup(org.workspaceKey);
    expect(markup.scopes).toContain('update-project-read-only');

    const paused = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await setPlan(org.organizationId, { pauseCommentsEnabled: false });
    const stillPaused = await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey });
    const resumed = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } });

    expect(paused.status).toBe(200);
    expect(paused.body.data.readOnly).toBe(true);
    expect(paused.body.data.scopes).not.toContain('create-thread');
    expect(stillPaused.body.data.scopes).toContain('update-project-read-only');
    expect(resumed.status).toBe(200);
    expect(resumed.body.data.readOnly).toBe(false);
    expect(resumed.body.data.scopes).toContain('create-thread');
    expect(resumed.body.data.scopes).not.toContain('update-project-read-only');
  });

  it('answers 400 for a readOnly that is not a boolean and 403 for a contributor', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const markup = await createMarkup(org.workspaceKey);

    const invalid = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: 'yes' } });
    const contributor = await call('PATCH', `/markups/${markup.id}/read-only`, {
      key: await makeMemberKey(org.workspaceId, 'contributor'),
      body: { readOnly: true },
    });

    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].pointer).toBe('/body/readOnly');
    expect(contributor.status).toBe(403);
  });
});
