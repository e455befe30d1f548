import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { apiKeyKey } from '../../shared/db/api-keys.js';
import { memberKey, userKey } from '../../shared/db/users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { makeRetainedOriginal, setPlan } from '../support/fixtures.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';

describe('workspace administration needs its role (issue 18 item 1)', () => {
  it('refuses a viewer every workspace administration with 403 insufficient-role, and changes nothing', async () => {
    const org = await makeOrganization('Viewer Proof');
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const original = await makeRetainedOriginal({ workspaceId: org.workspaceId, organizationId: org.organizationId });
    const viewer = await makeMemberKey(org.workspaceId, 'viewer');

    const refused = [
      await call('PATCH', '/workspace', { key: viewer, body: { name: 'Taken over' } }),
      await call('PATCH', '/workspace/settings', {
        key: viewer,
        body: { originalFileStoragePolicy: 'NEVER_STORE', applyToExisting: true },
      }),
      await call('POST', '/workspace/originals/archive-all', { key: viewer }),
      await call('DELETE', '/workspace', { key: viewer }),
    ];

    for (const response of refused) {
      expectProblem(response, 403);
      expect(response.body.type).toMatch(/insufficient-role$/);
    }
    const workspace = await call('GET', '/workspace', { key: org.workspaceKey });
    const settings = await call('GET', '/workspace/settings', { key: org.workspaceKey });
    const breakdown = await call('GET', '/workspace/storage-breakdown', { key: org.workspaceKey });
    expect(workspace.body.data.name).toBe('Viewer Proof');
    expect(settings.body.data.originalFileStoragePolicy).toBe('STORE_ALWAYS');
    expect(breakdown.body.data.originals).toBe(original.filesize);
  });

  it('lets an admin change the workspace and its settings but keeps deletion for owners', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const admin = await makeMemberKey(org.workspaceId, 'admin');
    const owner = await makeMemberKey(org.workspaceId, 'owner');

    const renamed = await call('PATCH', '/workspace', { key: admin, body: { name: 'Renamed by admin' } });
    const settings = await call('PATCH', '/workspace/settings', { key: admin, body: { originalFileStoragePolicy: 'NEVER_STORE' } });
    const archived = await call('POST', '/workspace/originals/archive-all', { key: admin });
    const refusedDelete = await call('DELETE', '/workspace', { key: admin });
    const deleted = await call('DELETE', '/workspace', { key: owner });

    expect([renamed.status, settings.status, archived.status]).toEqual([200, 200, 200]);
    expectProblem(refusedDelete, 403);
    expect(deleted.status).toBe(204);
  });
});

describe('a member key whose membership is gone has no role (issue 18 item 1)', () => {
  it('answers 403 to every operation instead of acting as an admin', async () => {
    const org = await makeOrganization();
    const member = await createWorkspaceKey(org.workspaceId, { email: `gone-${org.workspaceId.slice(0, 8)}@example.com`, role: 'viewer' });
    const folder = await call('POST', '/items', {
      key: org.workspaceKey,
      body: { parentFolderId: (await call('GET', '/workspace', { key: org.workspaceKey })).body.data.rootFolderId, name: 'Keep' },
    });
    await getDb().send(new DeleteCommand({ TableName: getConfig().tableName, Key: memberKey(org.workspaceId, member.userId) }));

    const read = await call('GET', '/workspace', { key: member.apiKey });
    const deleteFolder = await call('DELETE', `/items/${folder.body.data.id}`, { key: member.apiKey });
    const rename = await call('PATCH', '/workspace', { key: member.apiKey, body: { name: 'Not yours' } });

    for (const response of [read, deleteFolder, rename]) expectProblem(response, 403);
    expect((await call('GET', `/items/${folder.body.data.id}`, { key: org.workspaceKey })).status).toBe(200);
  });

  it('answers 403 to a key from before keys recorded actsAsMember whose user record is gone, instead of acting as an owner', async () => {
    const org = await makeOrganization();
    const member = await createWorkspaceKey(org.workspaceId, { email: `old-${org.workspaceId.slice(0, 8)}@example.com`, role: 'viewer' });
    const TableName = getConfig().tableName;
    // A key written before the attribute existed, whose user can no longer be found.
    await getDb().send(
      new UpdateCommand({ TableName, Key: apiKeyKey(member.apiKey.split('_')[1]!), UpdateExpression: 'REMOVE actsAsMember' }),
    );
    await getDb().send(new DeleteCommand({ TableName, Key: userKey(member.userId) }));

    const rename = await call('PATCH', '/workspace', { key: member.apiKey, body: { name: 'Not yours' } });

    expectProblem(rename, 403);
    expect((await call('GET', '/workspace', { key: org.workspaceKey })).body.data.name).not.toBe('Not yours');
  });
});
