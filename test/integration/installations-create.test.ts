import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getInstallation, getInstallationByPublicKey } from '../../shared/db/installations.js';
import { getItem } from '../../shared/db/items.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { createInstallation, customerKeyPair, refusedSigningKeys } from '../support/installations.js';
import { makeMemberKey, workspaceMarkupIds } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { makeSecondWorkspace, usedThisMonth } from '../support/workspaces.js';

/** Refused at once locally (nothing listens on port 9), so the markup's thumbnail job never starts a browser. */
const PAGE = 'http://127.0.0.1:9/pricing';
const INSTALLATION_FIELDS = [
  'allowedOrigins',
  'createdAt',
  'deletedAt',
  'id',
  'markupId',
  'modifiedAt',
  'publicKey',
  'status',
  'workspaceId',
];

const installationsOf = async (key: string, workspaceId?: string) =>
  (await call('GET', '/installations', { key, query: { workspaceId } })).body.data.data as { id: string }[];

describe('POST /installations registers an embedded client (Installations; issue 11 item 1)', () => {
  it('answers the Installation with a browser-safe publicKey and never the signing key', async () => {
    const org = await makeOrganization();

    const response = await call('POST', '/installations', { key: org.workspaceKey, body: { signingKey: customerKeyPair().publicKey } });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const installation = response.body.data;
    expect(Object.keys(installation).sort()).toEqual(INSTALLATION_FIELDS);
    expect(installation).toMatchObject({
      workspaceId: org.workspaceId,
      status: 'active',
      deletedAt: null,
      allowedOrigins: null,
      markupId: null,
    });
    expect(installation.publicKey).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(new Date(installation.createdAt).toISOString()).toBe(installation.createdAt);
    expect(installation.modifiedAt).toBe(installation.createdAt);
    expect(JSON.stringify(response.body)).not.toContain('BEGIN');
    expect(await getInstallationByPublicKey(installation.publicKey)).toMatchObject({
      id: installation.id,
      signingKey: customerKeyPair().publicKey,
    });
  });

  it('stores a PKCS#1 "RSA PUBLIC KEY" as SPKI PEM', async () => {
    const org = await makeOrganization();
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pkcs1 = pair.publicKey.export({ type: 'pkcs1', format: 'pem' }).toString();

    const installation = await createInstallation(org.workspaceKey, { signingKey: pkcs1 });

    expect((await getInstallation(installation.id))?.signingKey).toBe(pair.publicKey.export({ type: 'spki', format: 'pem' }).toString());
  });

  it('gives every installation its own id and publicKey (20 created at once)', async () => {
    const org = await makeOrganization();

    const created = await Promise.all(Array.from({ length: 20 }, () => createInstallation(org.workspaceKey)));

    expect(new Set(created.map((installation) => installation.publicKey)).size).toBe(20);
    expect(new Set(created.map((installation) => installation.id)).size).toBe(20);
  });

  it.each(refusedSigningKeys().map((entry) => [entry.label, entry] as const))(
    'refuses %s with 400 naming /body/signingKey, and creates nothing',
    async (_label, { value, says }) => {
      const org = await makeOrganization();

      const response = await call('POST', '/installations', { key: org.workspaceKey, body: { signingKey: value } });

      expectProblem(response, 400, '/body/signingKey');
      expect(response.body.errors[0].detail).toMatch(says);
      expect(await installationsOf(org.workspaceKey)).toEqual([]);
    },
  );

  it('refuses a missing or non-string signingKey with 400 naming it', async () => {
    const org = await makeOrganization();

    expectProblem(await call('POST', '/installations', { key: org.workspaceKey, body: {} }), 400, '/body/signingKey');
    expectProblem(
      await call('POST', '/installations', { key: org.workspaceKey, body: { signingKey: { kty: 'RSA' } } }),
      400,
      '/body/signingKey',
    );
  });

  it('keeps allowedOrigins as exact lower-case origins, once each', async () => {
    const org = await makeOrganization();
    const allowedOrigins = ['https://App.Example.com', 'http://localhost:3000', 'https://app.example.com', 'https://shop.example.com:443'];

    const installation = await createInstallation(org.workspaceKey, { allowedOrigins });

    expect(installation.allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:3000', 'https://shop.example.com']);
    expect((await call('GET', `/installations/${installation.id}`, { key: org.workspaceKey })).body.data.allowedOrigins).toEqual(
      installation.allowedOrigins,
    );
  });

  it.each([
    ['a path', 'https://example.com/app'],
    ['a trailing slash', 'https://example.com/'],
    ['a query', 'https://example.com?embed=1'],
    ['another scheme', 'ftp://example.com'],
    ['a wildcard', 'https://*.example.com'],
    ['no scheme', 'example.com'],
  ])('refuses an origin with %s with 400 naming its index', async (_label, origin) => {
    const org = await makeOrganization();

    const response = await call('POST', '/installations', {
      key: org.workspaceKey,
      body: { signingKey: customerKeyPair().publicKey, allowedOrigins: ['https://ok.example.com', origin] },
    });

    expectProblem(response, 400, '/body/allowedOrigins/1');
    expect(await installationsOf(org.workspaceKey)).toEqual([]);
  });

  it('refuses more than 50 origins, and allowedOrigins that is not a list of strings', async () => {
    const org = await makeOrganization();
    const many = Array.from({ length: 51 }, (_, i) => `https://site${i}.example.com`);
    const post = (allowedOrigins: unknown) =>
      call('POST', '/installations', { key: org.workspaceKey, body: { signingKey: customerKeyPair().publicKey, allowedOrigins } });

    expectProblem(await post(many), 400, '/body/allowedOrigins');
    expectProblem(await post('https://example.com'), 400, '/body/allowedOrigins');
    expectProblem(await post([42]), 400, '/body/allowedOrigins/0');
    expect((await createInstallation(org.workspaceKey, { allowedOrigins: many.slice(0, 50) })).allowedOrigins).toHaveLength(50);
  });
});

describe('POST /installations: which workspace, and who may (Authentication 3 and 4, DESIGN "What the live service\'s clients send")', () => {
  it('lets an organization key create in a workspace it names, and refuses it without workspaceId (400)', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);

    const named = await createInstallation(org.orgKey, { workspaceId: second.id });
    const unnamed = await call('POST', '/installations', { key: org.orgKey, body: { signingKey: customerKeyPair().publicKey } });

    expect(named.workspaceId).toBe(second.id);
    expectProblem(unnamed, 400);
    expect(unnamed.body.type).toMatch(/workspace-id-required$/);
  });

  it("refuses another workspace's or another organization's workspaceId with 403, and creates nothing", async () => {
    const [org, other] = await Promise.all([makeOrganization(), makeOrganization()]);
    const second = await makeSecondWorkspace(org.orgKey);
    const body = (workspaceId: string) => ({ signingKey: customerKeyPair().publicKey, workspaceId });

    expectProblem(await call('POST', '/installations', { key: org.workspaceKey, body: body(second.id) }), 403);
    expectProblem(await call('POST', '/installations', { key: org.orgKey, body: body(other.workspaceId) }), 403);
    expect(await installationsOf(org.orgKey, second.id)).toEqual([]);
    expect(await installationsOf(other.workspaceKey)).toEqual([]);
  });

  it('needs the admin role: a viewer and a contributor get 403 insufficient-role, an admin creates', async () => {
    const org = await makeOrganization();
    const [viewer, contributor, admin] = await Promise.all([
      makeMemberKey(org.workspaceId, 'viewer'),
      makeMemberKey(org.workspaceId, 'contributor'),
      makeMemberKey(org.workspaceId, 'admin'),
    ]);
    const post = (key: string) => call('POST', '/installations', { key, body: { signingKey: customerKeyPair().publicKey, url: PAGE } });

    const refused = [await post(viewer), await post(contributor)];

    for (const response of refused) {
      expectProblem(response, 403);
      expect(response.body.type).toMatch(/insufficient-role$/);
    }
    expect(await installationsOf(org.workspaceKey)).toEqual([]);
    expect((await post(admin)).status).toBe(200);
  });
});

describe('POST /installations with url: a webpage markup in the same transaction as the installation and the allowance charge', () => {
  it('creates the markup attached to the installation, named as asked and counted once', async () => {
    const org = await makeOrganization();

    const installation = await createInstallation(org.workspaceKey, { url: PAGE, name: 'Pricing page' });

    expect(installation.markupId).toEqual(expect.any(String));
    const markup = await call('GET', `/markups/${installation.markupId}`, { key: org.workspaceKey });
    expect(markup.status).toBe(200);
    expect(markup.body.data).toMatchObject({ type: 'webpage', url: PAGE, name: 'Pricing page', workspaceId: org.workspaceId });
    expect(await usedThisMonth(org.workspaceKey)).toBe(1);
  });

  it('records the installation on the markup and names the markup after the host without name', async () => {
    const org = await makeOrganization();

    const installation = await createInstallation(org.workspaceKey, { url: PAGE });

    expect(await getItem(installation.markupId!)).toMatchObject({ installationId: installation.id, name: '127.0.0.1' });
  });

  it('ignores name without url: no markup, nothing charged', async () => {
    const org = await makeOrganization();

    const installation = await createInstallation(org.workspaceKey, { name: 'Orphan name' });

    expect(installation.markupId).toBeNull();
    expect(await workspaceMarkupIds(org.workspaceId)).toEqual(new Set());
    expect(await usedThisMonth(org.workspaceKey)).toBe(0);
  });

  it('validates url and name as POST /markups/url does', async () => {
    const org = await makeOrganization();
    const post = (body: Record<string, unknown>) =>
      call('POST', '/installations', { key: org.workspaceKey, body: { signingKey: customerKeyPair().publicKey, ...body } });

    expectProblem(await post({ url: 'javascript:alert(1)' }), 400, '/body/url');
    expectProblem(await post({ url: 'https://example.com/', name: '   ' }), 400, '/body/name');
    expect(await installationsOf(org.workspaceKey)).toEqual([]);
  });

  it('answers 402 when the allowance is used up, leaving no installation and no markup', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 0, bundleBalance: 0 });

    const response = await call('POST', '/installations', {
      key: org.workspaceKey,
      body: { signingKey: customerKeyPair().publicKey, url: PAGE },
    });

    expectProblem(response, 402);
    expect(response.body.type).toMatch(/markup-limit-reached$/);
    expect(await installationsOf(org.workspaceKey)).toEqual([]);
    expect(await workspaceMarkupIds(org.workspaceId)).toEqual(new Set());
    expect(await usedThisMonth(org.workspaceKey)).toBe(0);
  });

  it('lets exactly 10 of 20 parallel creations through an allowance of 10: each one created has its markup, the refused left nothing', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 10, bundleBalance: 0 });

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call('POST', '/installations', { key: org.workspaceKey, body: { signingKey: customerKeyPair().publicKey, url: `${PAGE}/${i}` } }),
      ),
    );

    expect(responses.map((response) => response.status).sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(402)]);
    const created = responses.filter((response) => response.status === 200).map((response) => response.body.data);
    const listed = (await call('GET', '/installations', { key: org.workspaceKey, query: { limit: 100 } })).body.data.data;
    expect(listed.map((installation: { id: string }) => installation.id).sort()).toEqual(
      created.map((installation) => installation.id).sort(),
    );
    expect(await workspaceMarkupIds(org.workspaceId)).toEqual(new Set(created.map((installation) => installation.markupId)));
    expect(await usedThisMonth(org.workspaceKey)).toBe(10);
  });
});
