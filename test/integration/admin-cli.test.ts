import { describe, expect, it } from 'vitest';
import { call, localStack } from '../support/api.js';
import { spawnSync } from 'node:child_process';
import { repoRoot, runAdmin } from '../support/processes.js';
import { createThread, makeTypedMarkup } from '../support/threads.js';

const { dataDir } = localStack();

// Each test runs the CLI two to six times, each a new `npm run` and tsx: a few seconds on an idle
// machine, up to eight on a loaded one (a full run timed out at 30 s with four).
describe('npm run --silent admin (DESIGN.md contract: one JSON object on stdout)', { timeout: 90_000 }, () => {
  it('org create prints the new organization with working keys', async () => {
    const result = runAdmin(dataDir, ['org', 'create', '--name', 'CLI Org']);

    expect(result.status).toBe(0);
    expect(Object.keys(result.json).sort()).toEqual(['organizationApiKey', 'organizationId', 'workspaceApiKey', 'workspaceId']);
    const workspace = await call('GET', '/workspace', { key: result.json.workspaceApiKey });
    expect(workspace.body.data).toMatchObject({ id: result.json.workspaceId, name: 'CLI Org' });
    // Its keys carry labels, so what they write shows a readable author (issue 29 item 7).
    const listed = runAdmin(dataDir, ['key', 'list', '--org', result.json.organizationId]).json;
    expect(listed.keys.map((key: { name?: string }) => key.name).sort()).toEqual(['CLI Org organization key', 'CLI Org workspace key']);
  });

  it('key create for a workspace, for a member email, and for an organization; key revoke makes a key fail', async () => {
    const org = runAdmin(dataDir, ['org', 'create', '--name', 'Keys']).json;

    const workspaceKey = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId]).json;
    const memberKey = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--email', 'lee@example.com']).json;
    const orgKey = runAdmin(dataDir, ['key', 'create', '--org', org.organizationId]).json;
    const listWithWorkspaceKey = await call('GET', '/workspaces', { key: workspaceKey.apiKey });
    const listWithOrgKey = await call('GET', '/workspaces', { key: orgKey.apiKey });
    const revoked = runAdmin(dataDir, ['key', 'revoke', '--id', workspaceKey.keyId]);
    const afterRevoke = await call('GET', '/workspace', { key: workspaceKey.apiKey });

    expect(workspaceKey).toMatchObject({
      scope: 'workspace',
      organizationId: org.organizationId,
      workspaceId: org.workspaceId,
      userId: expect.any(String),
    });
    expect(memberKey).toMatchObject({ scope: 'workspace', workspaceId: org.workspaceId });
    expect(memberKey.userId).not.toBe(workspaceKey.userId);
    expect(orgKey).toMatchObject({ scope: 'organization', organizationId: org.organizationId });
    expect(orgKey).not.toHaveProperty('workspaceId');
    expect(listWithWorkspaceKey.status).toBe(403);
    expect(listWithOrgKey.status).toBe(200);
    expect(revoked.json).toEqual({ keyId: workspaceKey.keyId, revoked: true });
    expect(afterRevoke.status).toBe(401);
  });

  it('key create --name labels the key, and its API user shows the label as the author of what it writes', async () => {
    const org = runAdmin(dataDir, ['org', 'create', '--name', 'Labels']).json;
    const labelled = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--name', 'CI bot']).json;
    const unlabelled = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId]).json;
    const empty = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--name', ' ']);
    const markup = await makeTypedMarkup(org, 'image');

    const byLabelled = await createThread(labelled.apiKey, markup);
    const byUnlabelled = await createThread(unlabelled.apiKey, markup);
    const listed = runAdmin(dataDir, ['key', 'list', '--org', org.organizationId]).json;

    expect(byLabelled.user).toMatchObject({ id: labelled.userId, name: 'CI bot', guest: false });
    expect(byUnlabelled.user).toMatchObject({ id: unlabelled.userId, name: `API key ${unlabelled.keyId.slice(0, 8)}` });
    expect(listed.keys).toContainEqual(expect.objectContaining({ keyId: labelled.keyId, name: 'CI bot' }));
    expect(empty.status).toBe(2);
  });

  it('key create --email makes the first member an owner, later ones contributors, and takes --role', async () => {
    const org = runAdmin(dataDir, ['org', 'create', '--name', 'Members']).json;
    const member = (email: string, ...role: string[]) =>
      runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--email', email, ...role]).json;

    const first = member('first@example.com');
    const second = member('second@example.com');
    const viewer = member('viewer@example.com', '--role', 'viewer');
    const rename = (key: string) => call('PATCH', '/workspace', { key, body: { name: 'Renamed' } });

    expect(Object.keys(viewer).sort()).toEqual(['apiKey', 'keyId', 'organizationId', 'scope', 'userId', 'workspaceId']);
    expect((await rename(viewer.apiKey)).status).toBe(403);
    expect((await rename(second.apiKey)).status).toBe(403);
    expect((await call('GET', '/workspace', { key: second.apiKey })).status).toBe(200);
    expect((await rename(first.apiKey)).status).toBe(200);
    expect((await call('DELETE', '/workspace', { key: first.apiKey })).status).toBe(204);
  });

  it('key create --email --role for someone already a member with another role makes no key and says how to change the role', () => {
    const org = runAdmin(dataDir, ['org', 'create', '--name', 'Existing member']).json;
    const owner = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--email', 'owner@example.com']).json;
    const demoted = runAdmin(dataDir, [
      'key',
      'create',
      '--workspace',
      org.workspaceId,
      '--email',
      'owner@example.com',
      '--role',
      'viewer',
    ]);
    const same = runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--email', 'owner@example.com', '--role', 'owner']);

    expect(demoted.status).toBe(1);
    expect(JSON.parse(demoted.stderr.trim().split('\n')[0]!).error).toMatch(/already a member .* as owner.*PATCH \/users\//);
    expect(same.status).toBe(0);
    expect(same.json.userId).toBe(owner.userId);
  });

  it("key create --email for a removed member's address makes a new membership and a new key; the old keys stay dead", async () => {
    const org = runAdmin(dataDir, ['org', 'create', '--name', 'Returning member']).json;
    const member = (email: string, ...role: string[]) =>
      runAdmin(dataDir, ['key', 'create', '--workspace', org.workspaceId, '--email', email, ...role]).json;
    member('owner@example.com');
    const first = member('lee@example.com', '--role', 'admin');
    const second = member('lee@example.com');
    const read = (key: string) => call('GET', '/workspace', { key });

    const removed = await call('DELETE', `/users/${first.userId}`, { key: org.workspaceApiKey });
    const afterRemoval = [await read(first.apiKey), await read(second.apiKey)];
    const again = member('lee@example.com');
    const afterReAdding = [await read(first.apiKey), await read(second.apiKey), await read(again.apiKey)];
    const users = await call('GET', '/users', { key: again.apiKey });

    expect(removed.status).toBe(204);
    expect(afterRemoval.map((response) => response.status)).toEqual([401, 401]);
    expect(again.userId).toBe(first.userId);
    expect(again.keyId).not.toBe(first.keyId);
    expect(afterReAdding.map((response) => response.status)).toEqual([401, 401, 200]);
    // A new membership: the role a new member gets (contributor), not the removed one's (admin).
    expect(users.body.data).toContainEqual(
      expect.objectContaining({ id: again.userId, email: 'lee@example.com', role: 'contributor', status: 'active' }),
    );
  }, 120_000);

  it('plan show prints the defaults and plan set changes only what it is given', async () => {
    const org = runAdmin(dataDir, ['org', 'create', '--name', 'Plans']).json;

    const shown = runAdmin(dataDir, ['plan', 'show', '--org', org.organizationId]).json;
    const set = runAdmin(dataDir, [
      'plan',
      'set',
      '--org',
      org.organizationId,
      '--markup-limit',
      'unlimited',
      '--storage-feature',
      'on',
    ]).json;
    const again = runAdmin(dataDir, ['plan', 'set', '--org', org.organizationId, '--storage-limit', '1000', '--pause-comments', 'on']).json;
    const breakdown = await call('GET', '/workspace/storage-breakdown', { key: org.workspaceApiKey });

    expect(shown).toMatchObject({
      organizationId: org.organizationId,
      markupLimit: 50,
      storageFeatureEnabled: false,
      pauseCommentsEnabled: false,
    });
    expect(set).toMatchObject({ markupLimit: null, storageFeatureEnabled: true, pauseCommentsEnabled: false });
    expect(again).toMatchObject({ markupLimit: null, storageLimitBytes: 1000, storageFeatureEnabled: true, pauseCommentsEnabled: true });
    expect(breakdown.status).toBe(200);
  });

  it('exits non-zero with a JSON error for bad usage or unknown ids, printing nothing on stdout', () => {
    const usage = runAdmin(dataDir, ['plan', 'set', '--org', '00000000-0000-4000-8000-000000000000', '--markup-limit', 'lots']);
    const unknown = runAdmin(dataDir, ['plan', 'show', '--org', '00000000-0000-4000-8000-000000000000']);
    const nonsense = runAdmin(dataDir, ['frobnicate']);

    expect(usage.status).toBe(2);
    expect(unknown.status).toBe(1);
    expect(JSON.parse(unknown.stderr.split('\n')[0]!)).toHaveProperty('error');
    expect(nonsense.status).toBe(2);
    expect(unknown.json).toEqual([]);
  });
});

describe('npm run invoke (one function, one event from events/)', () => {
  const invoke = (...args: string[]) =>
    spawnSync('npm', ['run', '--silent', 'invoke', '--', ...args], {
      cwd: repoRoot,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'error' },
      encoding: 'utf8',
    });

  it('stops before invoking when a placeholder is not given, naming every missing one and how to pass it', () => {
    const one = invoke('threads', 'events/apigw-http/list-threads.json');
    const three = invoke('conversion', 'events/sqs/screenshot-thumbnail.json', 'threadId=00000000-0000-4000-8000-000000000001');

    expect(one.status).toBe(2);
    expect(one.stdout).toBe('');
    expect(one.stderr).toContain('markupId=...');
    expect(one.stderr).not.toContain('workspaceApiKey');
    expect(three.status).toBe(2);
    expect(three.stdout).toBe('');
    expect(three.stderr).toContain('markupId=...');
    expect(three.stderr).toContain('screenshotId=...');
    expect(three.stderr).not.toContain('threadId=...');
  });

  it('refuses a name=value that matches no placeholder of the event and says which placeholders it has', () => {
    const unknown = invoke('workspaces', 'events/apigw-http/get-workspace.json', 'markupId=00000000-0000-4000-8000-000000000001');
    const noEquals = invoke('threads', 'events/apigw-http/list-threads.json', 'markupId');

    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/markupId.*no placeholder/);
    expect(unknown.stderr).toMatch(/placeholders: workspaceApiKey/);
    expect(noEquals.status).toBe(2);
    expect(noEquals.stdout).toBe('');
    expect(noEquals.stderr).toContain('name=value');
  });

  it('runs the workspaces function on the sample GET /workspace event with the stack keys filled in', () => {
    const result = spawnSync('npm', ['run', '--silent', 'invoke', '--', 'workspaces', 'events/apigw-http/get-workspace.json'], {
      cwd: repoRoot,
      env: { ...process.env, DATA_DIR: dataDir },
      encoding: 'utf8',
    });
    const output = JSON.parse(result.stdout);

    expect(result.status).toBe(0);
    expect(output.statusCode).toBe(200);
    expect(JSON.parse(output.body).data.id).toBe(localStack().stack.workspaceId);
  });

  it('runs the conversion worker on a sample SQS event and reports the unknown job as a batch item failure', () => {
    const result = spawnSync('npm', ['run', '--silent', 'invoke', '--', 'conversion', 'events/sqs/unknown-job.json'], {
      cwd: repoRoot,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'error' },
      encoding: 'utf8',
    });

    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ batchItemFailures: [{ itemIdentifier: '059f36b4-87a3-44ab-83d2-661975830a7d' }] });
  });
});
