import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getInstallation, getInstallationByPublicKey, publicKeyClaimKey } from '../../shared/db/installations.js';
import type { Installation } from '../../shared/domain/installations/installations.js';
import { call, makeOrganization } from '../support/api.js';
import { createInstallation } from '../support/installations.js';
import { makeMemberKey } from '../support/items.js';
import { eventually } from '../support/polling.js';
import { expectProblem } from '../support/problems.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

const MISSING = '00000000-0000-4000-8000-00000000a11c';

const claimOf = async (publicKey: string) =>
  (await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: publicKeyClaimKey(publicKey), ConsistentRead: true }))).Item;

describe('GET /installations lists a workspace\'s installations, newest first (DESIGN "Envelope", "Pagination")', () => {
  it('pages with limit and before=<nextCursor>, visiting each installation exactly once', async () => {
    const org = await makeOrganization();
    const created: Installation[] = [];
    for (let i = 0; i < 7; i++) created.push(await createInstallation(org.workspaceKey));

    const pages: Installation[][] = [];
    let before: string | undefined;
    do {
      const response = await call('GET', '/installations', { key: org.workspaceKey, query: { limit: 3, before } });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(Object.keys(response.body.data).sort()).toEqual(['data', 'hasMore', 'nextCursor']);
      pages.push(response.body.data.data);
      before = response.body.data.nextCursor ?? undefined;
      expect(response.body.data.hasMore).toBe(before !== undefined);
    } while (before);

    expect(pages.map((page) => page.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((installation) => installation.id)).toEqual(created.map((installation) => installation.id).reverse());
    expect(pages.flat()[0]).toEqual(created.at(-1));
  });

  it("answers an organization key for the workspace it names, and never another workspace's installations", async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const [mine, theirs] = await Promise.all([
      createInstallation(org.workspaceKey),
      createInstallation(org.orgKey, { workspaceId: second.id }),
    ]);

    const own = await call('GET', '/installations', { key: org.workspaceKey });
    const named = await call('GET', '/installations', { key: org.orgKey, query: { workspaceId: second.id } });

    expect(own.body.data.data.map((installation: Installation) => installation.id)).toEqual([mine.id]);
    expect(named.body.data.data.map((installation: Installation) => installation.id)).toEqual([theirs.id]);
  });

  it('refuses an organization key without workspaceId (400), another workspace (403), a bad cursor and limit (400)', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);

    expectProblem(await call('GET', '/installations', { key: org.orgKey }), 400);
    expectProblem(await call('GET', '/installations', { key: org.workspaceKey, query: { workspaceId: second.id } }), 403);
    expectProblem(await call('GET', '/installations', { key: org.workspaceKey, query: { before: 'forged.cursor' } }), 400);
    expectProblem(await call('GET', '/installations', { key: org.workspaceKey, query: { limit: 101 } }), 400, '/query/limit');
    expectProblem(await call('GET', '/installations', { key: org.workspaceKey, query: { limit: 0 } }), 400, '/query/limit');
  });

  it('lets a viewer read (installation:read) but not create or delete (installation:manage)', async () => {
    const org = await makeOrganization();
    const installation = await createInstallation(org.workspaceKey);
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    expect((await call('GET', '/installations', { key: viewer })).body.data.data).toEqual([installation]);
    expect((await call('GET', `/installations/${installation.id}`, { key: viewer })).body.data).toEqual(installation);
    expectProblem(await call('DELETE', `/installations/${installation.id}`, { key: viewer }), 403);
    expect(await getInstallation(installation.id)).toBeDefined();
  });
});

describe('GET /installations/{id}', () => {
  it('answers the installation as it was created', async () => {
    const org = await makeOrganization();
    const installation = await createInstallation(org.workspaceKey, { allowedOrigins: ['https://app.example.com'] });

    const response = await call('GET', `/installations/${installation.id}`, { key: org.workspaceKey });

    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(installation);
  });

  it('answers 404 for an unknown id and 400 for one that is not a UUID', async () => {
    const org = await makeOrganization();

    expectProblem(await call('GET', `/installations/${MISSING}`, { key: org.workspaceKey }), 404);
    expectProblem(await call('GET', '/installations/not-a-uuid', { key: org.workspaceKey }), 400, '/params/id');
  });

  it("answers 403 for another workspace's or another organization's installation, reading and deleting alike", async () => {
    const [org, other] = await Promise.all([makeOrganization(), makeOrganization()]);
    const second = await makeSecondWorkspace(org.orgKey);
    const [inSecond, inOther] = await Promise.all([
      createInstallation(org.orgKey, { workspaceId: second.id }),
      createInstallation(other.workspaceKey),
    ]);

    for (const [key, installation] of [
      [org.workspaceKey, inSecond],
      [org.orgKey, inOther],
      [org.workspaceKey, inOther],
    ] as const) {
      expectProblem(await call('GET', `/installations/${installation.id}`, { key }), 403);
      expectProblem(await call('DELETE', `/installations/${installation.id}`, { key }), 403);
    }
    expect(await getInstallation(inSecond.id)).toBeDefined();
    expect(await getInstallation(inOther.id)).toBeDefined();
  });
});

describe('DELETE /installations/{id} removes the installation and its publicKey claim together', () => {
  it('answers 204; afterwards GET is 404, the publicKey no longer resolves and a second DELETE is 404', async () => {
    const org = await makeOrganization();
    const installation = await createInstallation(org.workspaceKey, { url: 'http://127.0.0.1:9/' });

    const deleted = await call('DELETE', `/installations/${installation.id}`, { key: org.workspaceKey });

    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expectProblem(await call('GET', `/installations/${installation.id}`, { key: org.workspaceKey }), 404);
    expect(await getInstallationByPublicKey(installation.publicKey)).toBeUndefined();
    expect(await claimOf(installation.publicKey)).toBeUndefined();
    expectProblem(await call('DELETE', `/installations/${installation.id}`, { key: org.workspaceKey }), 404);
    expect((await call('GET', `/markups/${installation.markupId}`, { key: org.workspaceKey })).status).toBe(200);
  });

  it('deletes once when 20 deletes race: one 204, the rest 404', async () => {
    const org = await makeOrganization();
    const installation = await createInstallation(org.workspaceKey);

    const responses = await Promise.all(
      Array.from({ length: 20 }, () => call('DELETE', `/installations/${installation.id}`, { key: org.workspaceKey })),
    );

    expect(responses.map((response) => response.status).sort()).toEqual([204, ...Array(19).fill(404)]);
    expect(await claimOf(installation.publicKey)).toBeUndefined();
  });

  it('lets an organization key delete in any workspace of its organization', async () => {
    const org = await makeOrganization();
    const installation = await createInstallation(org.workspaceKey);

    expect((await call('DELETE', `/installations/${installation.id}`, { key: org.orgKey })).status).toBe(204);
    expect(await getInstallation(installation.id)).toBeUndefined();
  });
});

describe('deleting a workspace takes its installations with it', () => {
  it('answers 404 for them at once, and removes them and their publicKey claims with the workspace content', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const installations = await Promise.all([0, 1, 2].map(() => createInstallation(org.orgKey, { workspaceId: second.id })));
    const survivor = await createInstallation(org.workspaceKey);

    expect((await call('DELETE', '/workspace', { key: org.orgKey, query: { workspaceId: second.id } })).status).toBe(204);

    expectProblem(await call('GET', `/installations/${installations[0]!.id}`, { key: org.orgKey }), 404);
    const remaining = async () =>
      (await Promise.all(installations.map((installation) => getInstallationByPublicKey(installation.publicKey)))).filter(Boolean);
    expect(await eventually(remaining, (found) => found.length === 0)).toEqual([]);
    for (const installation of installations) {
      expect(await getInstallation(installation.id)).toBeUndefined();
      expect(await claimOf(installation.publicKey)).toBeUndefined();
    }
    expect(await getInstallationByPublicKey(survivor.publicKey)).toMatchObject({ id: survivor.id });
  });
});
