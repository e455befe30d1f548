import * as v from 'valibot';
import { beforeAll, describe, expect, it } from 'vitest';
import { markupsRoutes } from '../../functions/markups/routes.js';
import { Include } from '../../functions/markups/schemas.js';
import { HttpUrl } from '../../shared/http/schemas.js';
import { compileRoutes } from '../../infra/local/gateway.js';
import { resetConfig } from '../../shared/config.js';
import { itemUpdate, type FolderRecord, type MarkupRecord } from '../../shared/db/items.js';
import { WORD_KEY_ATTRIBUTES, wordSortKey } from '../../shared/db/markup-words.js';
import { defaultPlan, type Plan } from '../../shared/db/plans.js';
import { usagePeriod } from '../../shared/db/usage.js';
import type { WorkspaceRecord } from '../../shared/db/workspaces.js';
import { expandsFiles, markupScopes, toPublicMarkup } from '../../shared/domain/markups/view.js';
import { requireDistinct } from '../../shared/domain/markups/access.js';
import { defaultNameOf, fileTypeOfUrl, newWebpageMarkupRecord } from '../../shared/domain/markups/create.js';
import { describeUsage } from '../../shared/domain/markups/usage.js';
import { routeKey } from '../../shared/http/route.js';

const WS = '11111111-1111-4111-8111-111111111111';
const ORG = '22222222-2222-4222-8222-222222222222';
const ROOT = '33333333-3333-4333-8333-333333333333';

function makeFolderRecord(overrides: Partial<FolderRecord> = {}): FolderRecord {
  return {
    kind: 'folder',
    id: ROOT,
    workspaceId: WS,
    organizationId: ORG,
    parentFolderId: null,
    name: 'Root',
    role: 'root',
    ancestorIds: [],
    createdAt: 1,
    modifiedAt: 1,
    activityAt: 1,
    ...overrides,
  };
}

function makeMarkup(overrides: Partial<MarkupRecord> = {}): MarkupRecord {
  const workspace = { id: WS, organizationId: ORG } as WorkspaceRecord;
  return {
    ...newWebpageMarkupRecord({
      placement: { workspace, parent: makeFolderRecord() },
      url: 'https://example.com/a',
      createdBy: 'u',
      at: 1_700_000_000_000,
    }),
    ...overrides,
  };
}

const plan = (overrides: Partial<Plan> = {}): Plan => ({ ...defaultPlan(ORG), ...overrides });

beforeAll(() => {
  process.env.TABLE_NAME ??= 'unit-table';
  resetConfig();
});

describe('Markups rule 1: create-from-url takes an http or https address', () => {
  it.each(['https://example.com', 'http://localhost:3000/a?b=c#d', 'https://例え.jp/パス'])('accepts %s', (url) => {
    expect(v.safeParse(HttpUrl, url).success).toBe(true);
  });

  it.each([
    '',
    'example.com',
    'ftp://example.com',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'https://',
    `https://e.com/${'x'.repeat(2040)}`,
  ])('refuses %s', (url) => {
    expect(v.safeParse(HttpUrl, url).success).toBe(false);
  });

  it('names a markup after the hostname and recognises supported file types by extension', () => {
    expect(defaultNameOf('https://www.example.org:8443/x')).toBe('www.example.org');
    expect(fileTypeOfUrl('https://e.com/a/b.PDF?download=1')).toBe('pdf');
    expect(fileTypeOfUrl('https://e.com/clip.mov')).toBe('video');
    expect(fileTypeOfUrl('https://e.com/art.psd')).toBe('convertible-image');
    expect(fileTypeOfUrl('https://e.com/photo.webp')).toBe('image');
    expect(fileTypeOfUrl('https://e.com/pricing')).toBeUndefined();
    expect(fileTypeOfUrl('https://e.com/page.html')).toBeUndefined();
  });
});

describe('Markups rules 7 and 8: include', () => {
  it('parses a comma-separated list of known values, ignoring blanks and spaces', () => {
    expect([...v.parse(Include, ' media, images ,,documents')]).toEqual(['media', 'images', 'documents']);
    expect(v.parse(Include, '').size).toBe(0);
  });

  it('names every unrecognised value in its message', () => {
    const result = v.safeParse(Include, 'images,video,thumbs');

    expect(result.success).toBe(false);
    expect(result.issues?.[0]?.message).toContain('"video", "thumbs"');
  });

  it('expands each value only for its own type; media expands every type with files', () => {
    expect(expandsFiles('image', new Set(['images']))).toBe(true);
    expect(expandsFiles('video', new Set(['images']))).toBe(false);
    expect(expandsFiles('pdf', new Set(['documents']))).toBe(true);
    expect(expandsFiles('video', new Set(['videos']))).toBe(true);
    expect(expandsFiles('pdf', new Set(['media']))).toBe(true);
    expect(expandsFiles('webpage', new Set(['media']))).toBe(false);
    expect(expandsFiles('image', undefined)).toBe(false);
  });
});

describe('Markup usage', () => {
  const period = usagePeriod(new Date('2026-03-10T12:00:00Z'));

  it('derives remaining, warning and limit flags from the allowance and the bundle', () => {
    const usage = describeUsage(plan({ markupLimit: 10, bundleBalance: 4 }), { used: 8, bundleUsed: 0 }, [], period);

    expect(usage).toMatchObject({
      limit: 10,
      remaining: 2,
      totalRemaining: 6,
      isWarning: true,
      isLimitReached: false,
      isDrawingOnBundle: false,
      isCustomOverride: true,
      averageMonthlyUsage: null,
      periodStart: '2026-03-01T00:00:00.000Z',
      periodEnd: '2026-04-01T00:00:00.000Z',
    });
  });

  it("never reports negative remaining when a plan was lowered below this month's use", () => {
    const usage = describeUsage(plan({ markupLimit: 3 }), { used: 7, bundleUsed: 0 }, [], period);

    expect(usage).toMatchObject({ remaining: 0, totalRemaining: 0, isLimitReached: true, isDrawingOnBundle: false });
  });

  it('reports drawing on the bundle when the allowance is used and the bundle has some, or the bundle was drawn on', () => {
    expect(describeUsage(plan({ markupLimit: 2, bundleBalance: 1 }), { used: 2, bundleUsed: 0 }, [], period).isDrawingOnBundle).toBe(true);
    expect(describeUsage(plan({ markupLimit: 2, bundleBalance: 0 }), { used: 2, bundleUsed: 3 }, [], period).isDrawingOnBundle).toBe(true);
  });

  it('reports an unlimited plan with nulls, no enforcement and no warning', () => {
    const usage = describeUsage(plan({ markupLimit: null }), { used: 900, bundleUsed: 0 }, [3, 4], period);

    expect(usage).toMatchObject({
      limit: null,
      remaining: null,
      totalRemaining: null,
      isUnlimited: true,
      enforcementEnabled: false,
      isWarning: false,
      isLimitReached: false,
      averageMonthlyUsage: 3.5,
    });
  });

  it('is not a custom override on the default allowance', () => {
    expect(describeUsage(plan(), { used: 0, bundleUsed: 0 }, [], period).isCustomOverride).toBe(false);
  });
});

describe('Markup scopes reflect the role and the read-only state', () => {
  it('gives a viewer view only, a contributor update and threads, an admin delete and read-only with the feature', () => {
    const markup = makeMarkup();

    expect(markupScopes(markup, 'viewer', plan())).toEqual(['view-project']);
    expect(markupScopes(markup, 'contributor', plan())).toEqual(['view-project', 'update-project', 'create-thread']);
    expect(markupScopes(markup, 'admin', plan())).not.toContain('update-project-read-only');
    expect(markupScopes(markup, 'admin', plan({ pauseCommentsEnabled: true }))).toContain('update-project-read-only');
    expect(markupScopes({ ...markup, readOnly: true }, 'admin', plan())).toContain('update-project-read-only');
    expect(markupScopes({ ...markup, readOnly: true }, 'owner', plan())).not.toContain('create-thread');
  });

  it('shows times as ISO strings and deletedAt as null', async () => {
    const shown = await toPublicMarkup(makeMarkup(), { role: 'owner', plan: plan(), appUrl: 'http://127.0.0.1:4000' });

    expect(shown).toMatchObject({ createdAt: '2023-11-14T22:13:20.000Z', deletedAt: null, type: 'webpage', url: 'https://example.com/a' });
  });

  it('links a rendered thumbnail through the app origin, which the app may load (behind CloudFront the request came to execute-api, which its CSP does not allow)', async () => {
    const markup = makeMarkup({ thumbnailState: 'ready', thumbnailKey: 'thumbnails/a.png' });
    const context = { role: 'owner' as const, plan: plan(), appUrl: 'https://d1234abcd.cloudfront.net' };

    const shown = await toPublicMarkup(markup, context);

    expect(shown.thumbnailUrl).toBe(`https://d1234abcd.cloudfront.net/api/v2/markups/${markup.id}/thumbnail`);
    expect(shown.markupUrl).toBe(`https://d1234abcd.cloudfront.net/markups/${markup.id}`);
  });
});

describe('itemUpdate keeps index keys in step and writes only what changed', () => {
  it('renaming a markup in a folder rewrites the name, its search text and its name key, guarded by the old values, and adds 1 to its version', () => {
    const before = makeMarkup({ parentFolderId: 'f' });
    const after = { ...before, name: 'Renamed', modifiedAt: before.modifiedAt + 5 };

    const update = itemUpdate(before, after, { unchangedSinceRead: true })!;

    const written = Object.values(update.ExpressionAttributeNames)
      .filter((name) => name !== 'PK')
      .sort();
    const wordKeys = written.filter((name) => WORD_KEY_ATTRIBUTES.includes(name));
    expect(written.filter((name) => !wordKeys.includes(name))).toEqual(['GSI1SK', 'modifiedAt', 'name', 'searchText', 'version']);
    // The word index: the new name's word in the first slot, the old name's other slots removed; not guarded (derived from the name).
    expect(wordKeys).toContain('GSI6SK');
    expect(update.UpdateExpression).toMatch(/ ADD #version :one$/);
    expect(Object.values(update.ExpressionAttributeValues!)).toContain(`renamed\u0001${before.id}`);
    expect(Object.values(update.ExpressionAttributeValues!)).toContain(wordSortKey('renamed', before.createdAt, before.id));
    expect(update.ConditionExpression).toMatch(/^attribute_exists\(#pk\)( AND #s\d+ = :os\d+){4}$/);
  });

  it('moving a markup to another workspace moves its workspace index key', () => {
    const before = makeMarkup();
    const after = { ...before, workspaceId: 'other', parentFolderId: 'target' };

    const update = itemUpdate(before, after, { unchangedSinceRead: true })!;

    expect(Object.values(update.ExpressionAttributeValues!)).toContain('WS#other#MARKUPS');
    expect(Object.values(update.ExpressionAttributeNames!)).toEqual(
      expect.arrayContaining(['GSI1PK', 'GSI2PK', 'GSI3PK', 'GSI4PK', 'parentFolderId', 'workspaceId']),
    );
  });

  it('answers undefined when nothing changes', () => {
    const markup = makeMarkup();

    expect(itemUpdate(markup, { ...markup })).toBeUndefined();
  });
});

describe('batches refuse an id listed twice', () => {
  it('throws a 400 naming the id', () => {
    expect(() => requireDistinct(['a', 'b', 'a'], 'markupIds')).toThrow(
      expect.objectContaining({ status: 400, message: 'markupIds lists a more than once.' }),
    );
    expect(() => requireDistinct(['a', 'b'], 'markupIds')).not.toThrow();
  });
});

describe('route specificity: literal markup paths are not taken for /markups/{id}', () => {
  const match = compileRoutes([{ name: 'markups', routes: markupsRoutes, handler: async () => ({ statusCode: 200 }) }]);

  it.each([
    ['GET', '/api/v2/markups/usage', 'GET /api/v2/markups/usage'],
    ['GET', '/api/v2/markups/search', 'GET /api/v2/markups/search'],
    ['POST', '/api/v2/markups/url', 'POST /api/v2/markups/url'],
    ['POST', '/api/v2/markups/bulk/move', 'POST /api/v2/markups/bulk/move'],
    ['POST', '/api/v2/markups/bulk/delete', 'POST /api/v2/markups/bulk/delete'],
    ['POST', '/api/v2/markups/bulk/from-url', 'POST /api/v2/markups/bulk/from-url'],
    ['POST', '/api/v2/markups/bulk/from-files', 'POST /api/v2/markups/bulk/from-files'],
    ['GET', `/api/v2/markups/${WS}`, 'GET /api/v2/markups/{id}'],
    ['POST', `/api/v2/markups/${WS}`, 'POST /api/v2/markups/{id}'],
    ['GET', `/api/v2/markups/${WS}/tag`, 'GET /api/v2/markups/{id}/tag'],
  ])('%s %s goes to %s', (method, path, key) => {
    expect(match(method, path)?.key).toBe(key);
  });

  it('declares each method and path once', () => {
    const keys = markupsRoutes.map(routeKey);

    expect(new Set(keys).size).toBe(keys.length);
  });
});
