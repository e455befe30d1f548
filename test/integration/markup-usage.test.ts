import { describe, expect, it } from 'vitest';
import { put, transact } from '../../shared/db/core/transact.js';
import { usageKey, usagePeriod } from '../../shared/db/usage.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';

type Org = Awaited<ReturnType<typeof makeOrganization>>;

const USAGE_TYPES: Record<string, string[]> = {
  scope: ['string'],
  used: ['number'],
  bundleUsed: ['number'],
  limit: ['number', 'null'],
  remaining: ['number', 'null'],
  totalRemaining: ['number', 'null'],
  isUnlimited: ['boolean'],
  enforcementEnabled: ['boolean'],
  isCustomOverride: ['boolean'],
  warningThreshold: ['number'],
  isWarning: ['boolean'],
  isLimitReached: ['boolean'],
  bundleBalance: ['number'],
  isDrawingOnBundle: ['boolean'],
  averageMonthlyUsage: ['number', 'null'],
  periodStart: ['string'],
  periodEnd: ['string'],
};

const typeOf = (value: unknown) => (value === null ? 'null' : typeof value);

async function usage(org: Org, workspaceId?: string) {
  const response = await call('GET', '/markups/usage', { key: workspaceId ? org.orgKey : org.workspaceKey, query: { workspaceId } });
  expect(response.status).toBe(200);
  return response.body.data;
}

const create = (org: Org, i = 0) => call('POST', '/markups/url', { key: org.workspaceKey, body: { url: `https://example.com/${i}` } });

describe('GET /markups/usage (Markup usage)', () => {
  it('reports every field with its type for a fresh workspace on the default plan', async () => {
    const org = await makeOrganization();
    const now = new Date();

    const data = await usage(org);

    expect(Object.keys(data).sort()).toEqual(Object.keys(USAGE_TYPES).sort());
    for (const [field, types] of Object.entries(USAGE_TYPES)) expect(types, field).toContain(typeOf(data[field]));
    expect(data).toMatchObject({
      scope: 'Workspace',
      used: 0,
      bundleUsed: 0,
      limit: 50,
      remaining: 50,
      totalRemaining: 50,
      isUnlimited: false,
      enforcementEnabled: true,
      isCustomOverride: false,
      warningThreshold: 0.8,
      isWarning: false,
      isLimitReached: false,
      bundleBalance: 0,
      isDrawingOnBundle: false,
      averageMonthlyUsage: null,
    });
    expect(data.periodStart).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    expect(data.periodEnd).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString());
  });

  it('reports an unlimited plan with null limit, remaining and totalRemaining and no enforcement', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: null, bundleBalance: 4 });
    await create(org);

    const data = await usage(org);

    expect(data).toMatchObject({
      used: 1,
      limit: null,
      remaining: null,
      totalRemaining: null,
      isUnlimited: true,
      enforcementEnabled: false,
      isCustomOverride: true,
      isWarning: false,
      isLimitReached: false,
      bundleBalance: 4,
      isDrawingOnBundle: false,
    });
  });

  it('warns at 80% of the allowance and marks a custom limit', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 5, bundleBalance: 2 });
    for (let i = 0; i < 4; i += 1) expect((await create(org, i)).status).toBe(200);

    const data = await usage(org);

    expect(data).toMatchObject({
      used: 4,
      limit: 5,
      remaining: 1,
      totalRemaining: 3,
      isCustomOverride: true,
      isWarning: true,
      isLimitReached: false,
      isDrawingOnBundle: false,
    });
  });

  it('averages the totals of earlier months', async () => {
    const org = await makeOrganization();
    const now = new Date();
    const monthsAgo = (n: number) => usagePeriod(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 15))).key;
    await transact([
      put({ ...usageKey(org.workspaceId, monthsAgo(1)), entity: 'Usage', used: 10, bundleUsed: 2 }),
      put({ ...usageKey(org.workspaceId, monthsAgo(2)), entity: 'Usage', used: 5, bundleUsed: 0 }),
    ]);
    await create(org);

    const data = await usage(org);

    expect(data.used).toBe(1);
    expect(data.averageMonthlyUsage).toBe(8.5);
  });

  it('counts per workspace: an organization key names one, or gets its default workspace', async () => {
    const org = await makeOrganization();
    const other = (await call('POST', '/workspace', { key: org.orgKey, body: { name: 'Other' } })).body.data;
    await create(org);
    await call('POST', '/markups/url', { key: org.orgKey, body: { url: 'https://a.example', workspaceId: other.id } });
    await call('POST', '/markups/url', { key: org.orgKey, body: { url: 'https://b.example', workspaceId: other.id } });

    const byDefault = await call('GET', '/markups/usage', { key: org.orgKey });
    const named = await usage(org, other.id);
    const outOfScope = await call('GET', '/markups/usage', { key: org.workspaceKey, query: { workspaceId: other.id } });

    expect(byDefault.body.data.used).toBe(1);
    expect(named.used).toBe(2);
    expect(outOfScope.status).toBe(403);
  });
});

describe('Limits: monthly markup allowance (402 when the allowance and bundle are used up)', () => {
  it('lets exactly 10 of 20 parallel creations through an allowance of 10 and refuses the rest with 402', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 10, bundleBalance: 0 });

    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => create(org, i)));

    const statuses = responses.map((response) => response.status).sort();
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(10);
    const refused = responses.find((response) => response.status === 402)!;
    expect(refused.body.type).toBe('urn:review-board:problem:markup-limit-reached');
    const data = await usage(org);
    expect(data).toMatchObject({ used: 10, bundleUsed: 0, remaining: 0, isLimitReached: true, isWarning: true });
    const list = await call('GET', '/markups', { key: org.workspaceKey });
    expect(list.body.data.data).toHaveLength(10);
  });

  it('draws on the bundle after the allowance: limit 2 and bundle 3 give 5 markups, the 6th is a 402', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 2, bundleBalance: 3 });

    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await create(org, i)).status);

    expect(statuses).toEqual([200, 200, 200, 200, 200, 402]);
    const data = await usage(org);
    expect(data).toMatchObject({
      used: 2,
      bundleUsed: 3,
      bundleBalance: 0,
      remaining: 0,
      totalRemaining: 0,
      isLimitReached: true,
      isDrawingOnBundle: true,
    });
  });

  it('reports isDrawingOnBundle once the allowance is used up while the bundle has markups left', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 1, bundleBalance: 5 });
    await create(org);

    const data = await usage(org);

    expect(data).toMatchObject({ used: 1, bundleUsed: 0, isLimitReached: true, isDrawingOnBundle: true, totalRemaining: 5 });
  });

  it('charges a bulk creation as a whole: 402 and nothing created when it does not fit', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 3, bundleBalance: 1 });
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `https://bulk.example/${i}` }));

    const tooMany = await call('POST', '/markups/bulk/from-url', { key: org.workspaceKey, body: { items: items(5) } });
    const fits = await call('POST', '/markups/bulk/from-url', { key: org.workspaceKey, body: { items: items(4) } });

    expect(tooMany.status).toBe(402);
    expect(fits.status).toBe(204);
    expect(await usage(org)).toMatchObject({ used: 3, bundleUsed: 1, bundleBalance: 0 });
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data.data).toHaveLength(4);
  });

  it('creates nothing on a 402', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { markupLimit: 0 });

    const response = await create(org);

    expect(response.status).toBe(402);
    expect((await call('GET', '/markups', { key: org.workspaceKey })).body.data.data).toEqual([]);
    expect(await usage(org)).toMatchObject({ used: 0, isLimitReached: true, isWarning: true });
  });
});
