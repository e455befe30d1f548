import { describe, expect, it } from 'vitest';
import { generateApiKey, parseApiKey } from '../../shared/auth/api-key-format.js';
import { getApiKey, revokeApiKey } from '../../shared/db/api-keys.js';
import { scanMatching } from '../../shared/db/core/paging.js';
import { getUser } from '../../shared/db/users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization, useOwnLocalStack } from '../support/api.js';

// A table of this file's own: one test reads all of it.
useOwnLocalStack();

describe('Authentication rule 1: every request carries Authorization: Bearer <API key>', () => {
  it('answers 401 with a problem body and WWW-Authenticate when the header is missing', async () => {
    const response = await call('GET', '/workspace');

    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body).toMatchObject({ status: 401, title: 'Unauthorized', type: expect.stringContaining('unauthorized') });
    expect(response.body.requestId).toEqual(expect.any(String));
  });

  it('answers 401 for a malformed header, an unknown key, and a known key id with a wrong secret', async () => {
    const org = await makeOrganization();
    const unknown = generateApiKey().apiKey;
    const wrongSecret = `${org.workspaceKey.slice(0, 37)}${'A'.repeat(43)}`;

    for (const authorization of ['Basic abc', 'Bearer', `Bearer ${unknown}`, `Bearer ${wrongSecret}`, 'Bearer not-a-key']) {
      const response = await call('GET', '/workspace', { headers: { Authorization: authorization } });
      expect(response.status, authorization).toBe(401);
    }
  });

  it('answers 401 for an anonymous request even when its body is also invalid', async () => {
    const response = await call('POST', '/workspace', { body: { name: 7 } });

    expect(response.status).toBe(401);
  });

  it('refuses a revoked key with 401 while other keys keep working', async () => {
    const org = await makeOrganization();
    const extra = await createWorkspaceKey(org.workspaceId);
    const before = await call('GET', '/workspace', { key: extra.apiKey });

    await revokeApiKey(extra.keyId);
    const after = await call('GET', '/workspace', { key: extra.apiKey });
    const other = await call('GET', '/workspace', { key: org.workspaceKey });

    expect(before.status).toBe(200);
    expect(after.status).toBe(401);
    expect(other.status).toBe(200);
  });
});

describe('API keys are random, shown once and stored only as a hash', () => {
  it('keeps no plain key in the table, only a SHA-256 hash of its secret', async () => {
    const org = await makeOrganization();
    // The secret is base64url, so it may itself hold '_': parse the key, never split it.
    const { keyId, secret } = parseApiKey(org.workspaceKey)!;

    const record = await getApiKey(keyId);
    const items: Record<string, unknown>[] = [];
    for await (const item of scanMatching({ expression: 'size(PK) > :empty', values: { ':empty': 0 } })) items.push(item);
    const dump = JSON.stringify(items);

    expect(record?.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(dump).toContain(record!.secretHash);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(org.workspaceKey);
  });

  it('issues a different key every time', async () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey().apiKey));

    expect(keys.size).toBe(50);
  });

  it('makes each key act as its own stable API user named after the key', async () => {
    const org = await makeOrganization();
    const record = await getApiKey(org.workspaceKey.split('_')[1]!);

    const user = await getUser(record!.userId);

    expect(user).toMatchObject({ kind: 'api', name: `API key ${record!.keyId.slice(0, 8)}`, emailVerified: false });
  });

  it('makes keys created for the same member email act as that one member', async () => {
    const org = await makeOrganization();

    const first = await createWorkspaceKey(org.workspaceId, { email: `Pat.${org.workspaceId.slice(0, 6)}@example.com` });
    const second = await createWorkspaceKey(org.workspaceId, { email: `pat.${org.workspaceId.slice(0, 6)}@example.com` });
    const user = await getUser(first.userId);

    expect(second.userId).toBe(first.userId);
    expect(user).toMatchObject({ kind: 'member', emailVerified: true });
  });
});

describe('Authentication rule 3: organization-only operations and workspace scope', () => {
  it('gives a workspace key 403 on listing and creating workspaces, and an organization key 200/201', async () => {
    const org = await makeOrganization();

    const results = await Promise.all([
      call('GET', '/workspaces', { key: org.workspaceKey }),
      call('POST', '/workspace', { key: org.workspaceKey, body: { name: 'n' } }),
      call('GET', '/workspaces', { key: org.orgKey }),
      call('POST', '/workspace', { key: org.orgKey, body: { name: 'n' } }),
    ]);

    expect(results.map((r) => r.status)).toEqual([403, 403, 200, 201]);
  });
});
