import * as v from 'valibot';
import { describe, expect, inject, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { routeKey } from '../../shared/http/route.js';
import { call, makeOrganization, type ApiResponse } from '../support/api.js';
import { createExternalUser, deleteExternalUser, getExternalUser, newExternalId, patchExternalUser } from '../support/external-users.js';
import { makeItemsWorkspace } from '../support/folder-items.js';
import { makeFolder } from '../support/items.js';
import { changeRole, freshEmail, invite, listUsers, makeMember, removeUser } from '../support/members.js';
import { makeSecondWorkspace } from '../support/workspaces.js';
import { BROWSER_CONTEXT, makeTypedMarkup, threadBody } from '../support/threads.js';
import { createMarkup } from '../support/url-markups.js';

// Each test reads a body the way the live service's existing clients do (DESIGN.md "Envelope",
// "Operations listed as 204 but described as returning data"): they must work against us unchanged.

/** The answer's `data` fits the schema the OpenAPI document shows for that route and status. */
function expectDocumented(key: string, response: ApiResponse): void {
  const route = allRoutes().find((candidate) => routeKey(candidate) === `${key.split(' ')[0]} /api/v2${key.split(' ')[1]}`);
  const schema = route?.responses.find((doc) => doc.status === response.status)?.schema;
  expect(schema, `${key} documents ${response.status}`).toBeDefined();
  const parsed = v.safeParse(schema!, response.body.data);
  expect(parsed.issues?.map((issue) => `${v.getDotPath(issue)}: ${issue.message}`) ?? []).toEqual([]);
}

describe("Envelope: lists answer { data: P } with P exactly the spec's Response column", () => {
  it('GET /markups: data.data holds the markups, with hasMore, nextCursor and prevCursor beside it', async () => {
    const org = await makeOrganization();
    const markups = [await createMarkup(org.workspaceKey), await createMarkup(org.workspaceKey)];

    const response = await call('GET', '/markups', { key: org.workspaceKey, query: { limit: 1 } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data.data.map((markup: { id: string }) => markup.id)).toEqual([markups[1]!.id]);
    expect(response.body.data).toMatchObject({ hasMore: true, nextCursor: expect.any(String), prevCursor: null });
    expectDocumented('GET /markups', response);
  });

  it('GET /markups/search: data.data holds the matches, with hasMore and nextCursor beside it', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey, { url: 'https://example.com/pricing', name: 'Pricing' });

    const response = await call('GET', '/markups/search', { key: org.workspaceKey, query: { query: 'pric' } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data.data.map((found: { id: string }) => found.id)).toEqual([markup.id]);
    expect(response.body.data).toMatchObject({ hasMore: false, nextCursor: null });
    expectDocumented('GET /markups/search', response);
  });

  it('GET /workspaces: data.data holds the workspaces, with hasMore, nextCursor and prevCursor beside it', async () => {
    const org = await makeOrganization();
    await makeSecondWorkspace(org.orgKey);

    const response = await call('GET', '/workspaces', { key: org.orgKey, query: { limit: 1 } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data.data).toHaveLength(1);
    expect(response.body.data.data[0]).toMatchObject({ id: expect.any(String), rootFolderId: expect.any(String) });
    expect(response.body.data).toMatchObject({ hasMore: true, nextCursor: expect.any(String), prevCursor: null });
    expectDocumented('GET /workspaces', response);
  });

  it('GET /threads: data holds threads, query, offset, total and cursorId', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup) });

    const response = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(Object.keys(response.body.data).sort()).toEqual(['cursorId', 'offset', 'query', 'threads', 'total']);
    expect(response.body.data.threads).toHaveLength(1);
    expectDocumented('GET /threads', response);
  });
});

describe("Operations listed as 204 but described as returning data: the live service's shapes", () => {
  it('GET /markups/:id/view-modes: data.projectViewModes, each with id, category, name, width, height and threadCount', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);

    const response = await call('GET', `/markups/${markup.id}/view-modes`, { key: org.workspaceKey });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body.data)).toEqual(['projectViewModes']);
    expect(response.body.data.projectViewModes.map((mode: { category: string }) => mode.category)).toEqual(['desktop', 'tablet', 'mobile']);
    for (const mode of response.body.data.projectViewModes) {
      expect(mode).toEqual({
        id: expect.any(String),
        category: expect.any(String),
        name: expect.any(String),
        width: expect.any(Number),
        height: expect.any(Number),
        threadCount: 0,
      });
    }
    expectDocumented('GET /markups/{id}/view-modes', response);
  });

  it('GET /items/:id/items: data.items, where markups carry markupUrl (and url for a webpage) and folders carry their counts', async () => {
    const ws = await makeItemsWorkspace();
    const folder = await makeFolder(ws.workspaceKey, ws.rootId, 'Designs');
    await makeFolder(ws.workspaceKey, folder.id, 'Inner');
    await ws.markup(folder.id, 'Inside');
    await ws.markup(folder.id, 'Inside too');
    const webpage = await ws.markup(ws.rootId, 'A webpage');
    const image = await makeTypedMarkup(ws, 'image', { name: 'An image' });

    const response = await call('GET', `/items/${ws.rootId}/items`, { key: ws.workspaceKey });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data).toMatchObject({ hasMore: false, nextCursor: null, prevCursor: null });
    const items: Record<string, unknown>[] = response.body.data.items;
    // How the live clients tell the two apart: a markup has `url` or `markupUrl`, a folder neither.
    const folders = items.filter((item) => !('url' in item) && !('markupUrl' in item));
    const markups = items.filter((item) => 'url' in item || 'markupUrl' in item);
    expect(folders.map((item) => [item.id, item.type, item.folderCount, item.projectCount])).toEqual([[folder.id, 'folder', 1, 2]]);
    expect(markups.map((item) => item.id).sort()).toEqual([webpage.id, image.id].sort());
    const byId = new Map(markups.map((item) => [item.id, item]));
    expect(byId.get(webpage.id)).toMatchObject({
      type: 'markup',
      url: webpage.url,
      markupUrl: expect.stringMatching(new RegExp(`/markups/${webpage.id}$`)),
    });
    expect(byId.get(image.id)).toMatchObject({ type: 'markup', markupUrl: expect.stringMatching(new RegExp(`/markups/${image.id}$`)) });
    expect(byId.get(image.id)).not.toHaveProperty('url');
    expect(byId.get(image.id)).not.toHaveProperty('folderCount');
    expectDocumented('GET /items/{id}/items', response);
  });

  it('POST /items: data is the created folder, with its (empty) counts', async () => {
    const ws = await makeItemsWorkspace();

    const response = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name: 'New' } });

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ type: 'folder', name: 'New', folderCount: 0, projectCount: 0 });
    expect(response.body.data).not.toHaveProperty('url');
    expect(response.body.data).not.toHaveProperty('markupUrl');
    expectDocumented('POST /items', response);
  });

  it('POST /workspace: 201 with the workspace under data', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Created' } });

    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      id: expect.any(String),
      name: 'Created',
      rootFolderId: expect.any(String),
      archiveFolderId: expect.any(String),
    });
    expectDocumented('POST /workspace', response);
  });
});

describe('Workspace users (all listed as 204): GET /users and GET /users/external/:externalId answer data, the rest 204 with no body', () => {
  const usersRoutes = () => allRoutes().filter((route) => route.path.startsWith('/api/v2/users'));
  const answersData = ['GET /api/v2/users', 'GET /api/v2/users/external/{externalId}'];

  it('documents 200 with a schema for the two reads and a bare 204 for every other row', () => {
    const documented = usersRoutes().map((route) => [
      routeKey(route),
      route.responses.filter((doc) => doc.status < 300).map((doc) => [doc.status, Boolean(doc.schema)]),
    ]);

    expect(documented).toHaveLength(8);
    for (const [key, successes] of documented)
      expect(successes, String(key)).toEqual(answersData.includes(String(key)) ? [[200, true]] : [[204, false]]);
  });

  it('GET /users: data is the list of users, each exactly id, email, name, role and status', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');

    const response = await listUsers(owner.key);

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(response.body.data).toEqual([
      { id: owner.userId, email: owner.email, name: expect.any(String), role: 'owner', status: 'active' },
    ]);
    expectDocumented('GET /users', response);
  });

  it('GET /users/external/:externalId: data is the external user; POST and PATCH /users/external answer 204 with no body', async () => {
    const org = await makeOrganization();
    const externalId = newExternalId();

    const created = await createExternalUser(org.workspaceKey, { externalId, name: 'Live client' });
    const patched = await patchExternalUser(org.workspaceKey, externalId, { email: 'live@example.com' });
    const read = await getExternalUser(org.workspaceKey, externalId);
    const deleted = await deleteExternalUser(org.workspaceKey, externalId);

    for (const answer of [created, patched, deleted]) expect([answer.status, answer.body], JSON.stringify(answer.body)).toEqual([204, '']);
    expect(read.status).toBe(200);
    expect(Object.keys(read.body)).toEqual(['data']);
    expect(Object.keys(read.body.data).sort()).toEqual([
      'avatarFileId',
      'avatarUrl',
      'createdAt',
      'email',
      'externalId',
      'id',
      'modifiedAt',
      'name',
    ]);
    expect(read.body.data).toMatchObject({ externalId, name: 'Live client', email: 'live@example.com' });
    expectDocumented('GET /users/external/{externalId}', read);
  });

  it('POST /users/invite, PATCH /users/:userId/role and DELETE /users/:userId answer 204 with no body', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const member = await makeMember(org.workspaceId, 'viewer');

    const invited = await invite(owner.key, { emails: [freshEmail()] });
    const changed = await changeRole(owner.key, member.userId, 'contributor');
    const removed = await removeUser(owner.key, member.userId);

    for (const answer of [invited, changed, removed]) expect([answer.status, answer.body], JSON.stringify(answer.body)).toEqual([204, '']);
  });
});

describe("What the live service's clients send: accepted", () => {
  it('creates a thread whose browserContext has no osVersionName (every BrowserContextRequest field is optional)', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const { osVersionName: _left, ...partial } = BROWSER_CONTEXT;

    const withoutName = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { browserContext: partial }) });
    const onlyBrowser = await call('POST', '/threads', {
      key: org.workspaceKey,
      body: threadBody(markup, { browserContext: { browserName: 'Safari' } }),
    });

    expect(withoutName.status, JSON.stringify(withoutName.body)).toBe(200);
    expect(onlyBrowser.status, JSON.stringify(onlyBrowser.body)).toBe(200);
  });

  it('accepts limit=100 on every list', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const rootId = markup.parentFolderId!;

    const answers = await Promise.all([
      call('GET', '/markups', { key: org.workspaceKey, query: { limit: 100 } }),
      call('GET', '/markups/search', { key: org.workspaceKey, query: { limit: 100 } }),
      call('GET', '/workspaces', { key: org.orgKey, query: { limit: 100 } }),
      call('GET', `/items/${rootId}/items`, { key: org.workspaceKey, query: { limit: 100 } }),
      call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, limit: 100 } }),
    ]);

    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
  });

  it("treats a request carrying the live service's own version header as carrying none", async () => {
    const org = await makeOrganization();

    const foreign = await fetch(new URL('/api/v2/workspace', inject('localStack').stack.baseUrl), {
      headers: { Authorization: `Bearer ${org.workspaceKey}`, 'Acme-API-Version': '2020-01-01' },
    });

    expect(foreign.status, await foreign.text()).toBe(200);
    expect(foreign.headers.get('service-api-version')).toBe('2023-02-22');
  });

  it('ignores unknown body fields', async () => {
    const ws = await makeItemsWorkspace();
    const markup = await makeTypedMarkup(ws, 'webpage');

    const folder = await call('POST', '/items', { key: ws.workspaceKey, body: { parentFolderId: ws.rootId, name: 'Extra', color: 'red' } });
    const thread = await call('POST', '/threads', {
      key: ws.workspaceKey,
      body: threadBody(markup, { clientVersion: '4.2.0', browserContext: { ...BROWSER_CONTEXT, gpu: 'x' } }),
    });

    expect(folder.status).toBe(200);
    expect(folder.body.data).not.toHaveProperty('color');
    expect(thread.status, JSON.stringify(thread.body)).toBe(200);
  });
});

describe('Item 11: GET /markups and /markups/search default a workspace key to its own workspace', () => {
  for (const path of ['/markups', '/markups/search']) {
    it(`${path}: a workspace key without workspaceId lists its own workspace; an organization key gets 400`, async () => {
      const org = await makeOrganization();
      const markup = await createMarkup(org.workspaceKey);

      const byWorkspaceKey = await call('GET', path, { key: org.workspaceKey });
      const byOrganizationKey = await call('GET', path, { key: org.orgKey });

      expect(byWorkspaceKey.status).toBe(200);
      expect(byWorkspaceKey.body.data.data.map((found: { id: string }) => found.id)).toEqual([markup.id]);
      expect(byOrganizationKey.status).toBe(400);
      expect(byOrganizationKey.body.detail).toContain('workspaceId');
    });
  }
});
