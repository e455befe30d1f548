import { describe, expect, it } from 'vitest';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { tiffBytes, uploadFile } from '../support/uploads.js';
import { storageBreakdownOf, waitForOriginalBytes } from '../support/workspaces.js';

/** A converted (TIFF) markup made through the real upload flow; its source is its original. */
async function makeConvertedMarkup(key: string, workspaceId: string, bytes: Buffer) {
  const { fileId } = await uploadFile(key, { bytes, filename: 'scan.tiff', contentType: 'image/tiff' });
  const created = await call('POST', '/markups/from-files', { key, body: { workspaceId, fileIds: [fileId] } });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body.data as { id: string; hasRetainedOriginal: boolean; retainOriginal: boolean; scopes: string[] };
}

describe('originals of converted markups (States and transitions: Original rows)', () => {
  it('keeps the source of a converted markup as its retained original, counted under originals', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const bytes = await tiffBytes(6, 4);

    const markup = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, bytes);
    const breakdown = await storageBreakdownOf(org.workspaceKey);

    expect(markup).toMatchObject({ hasRetainedOriginal: true, retainOriginal: false });
    expect(markup.scopes).toContain('manage-original');
    expect(breakdown.originals).toBe(bytes.length);
    expect(breakdown.total).toBe(
      Object.entries(breakdown)
        .filter(([name]) => name !== 'total')
        .reduce((sum, [, bytes]) => sum + (bytes as number), 0),
    );
  });

  it('hands out a short-lived download URL that returns the original bytes over a plain GET', async () => {
    const org = await makeOrganization();
    const bytes = await tiffBytes(5, 5);
    const markup = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, bytes);

    const response = await call('GET', `/markups/${markup.id}/original/download-url`, { key: org.workspaceKey });
    const download = await fetch(response.body.data.url);

    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ filename: 'scan.tiff', mimeType: 'image/tiff', filesize: bytes.length });
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('archives with DELETE, answering archivedFileSize; afterwards download and archive are 404 and the bytes no longer count', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const bytes = await tiffBytes(4, 4);
    const markup = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, bytes);

    const archived = await call('DELETE', `/markups/${markup.id}/original`, { key: org.workspaceKey });
    const after = await call('GET', `/markups/${markup.id}`, { key: org.workspaceKey });
    const download = await call('GET', `/markups/${markup.id}/original/download-url`, { key: org.workspaceKey });
    const again = await call('DELETE', `/markups/${markup.id}/original`, { key: org.workspaceKey });

    expect(archived.status).toBe(200);
    expect(archived.body).toEqual({ data: { archivedFileSize: bytes.length } });
    expect(after.body.data).toMatchObject({ hasRetainedOriginal: false, retainOriginal: false });
    expect(download.status).toBe(404);
    expect(again.status).toBe(404);
    expect((await storageBreakdownOf(org.workspaceKey)).originals).toBe(0);
  });

  it('keeps an original with retainOriginal: true, archives it with false, and refuses to re-retain an archived one (400)', async () => {
    const org = await makeOrganization();
    const markup = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, await tiffBytes(3, 3));

    const kept = await call('PATCH', `/markups/${markup.id}/original`, { key: org.workspaceKey, body: { retainOriginal: true } });
    const dropped = await call('PATCH', `/markups/${markup.id}/original`, { key: org.workspaceKey, body: { retainOriginal: false } });
    const reRetain = await call('PATCH', `/markups/${markup.id}/original`, { key: org.workspaceKey, body: { retainOriginal: true } });
    const invalid = await call('PATCH', `/markups/${markup.id}/original`, { key: org.workspaceKey, body: { retainOriginal: 'yes' } });

    expect(kept.status).toBe(200);
    expect(kept.body.data).toMatchObject({ retainOriginal: true, hasRetainedOriginal: true });
    expect(dropped.body.data).toMatchObject({ retainOriginal: false, hasRetainedOriginal: false });
    expect(reRetain.status).toBe(400);
    expect(reRetain.body.type).toContain('original-archived');
    expect(invalid.status).toBe(400);
  });

  it('answers 404 for the original of a markup that never had one', async () => {
    const org = await makeOrganization();
    const webpage = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://example.com/' } });

    const download = await call('GET', `/markups/${webpage.body.data.id}/original/download-url`, { key: org.workspaceKey });
    const archive = await call('DELETE', `/markups/${webpage.body.data.id}/original`, { key: org.workspaceKey });
    const patch = await call('PATCH', `/markups/${webpage.body.data.id}/original`, {
      key: org.workspaceKey,
      body: { retainOriginal: true },
    });

    expect([download.status, archive.status, patch.status]).toEqual([404, 404, 404]);
  });
});

describe('workspace policy and originals (Workspaces rules 2 and 3)', () => {
  it('NEVER_STORE with applyToExisting archives retained originals but keeps those a markup chose to retain', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const plain = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, await tiffBytes(3, 2));
    const keptBytes = await tiffBytes(2, 3);
    const kept = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, keptBytes);
    await call('PATCH', `/markups/${kept.id}/original`, { key: org.workspaceKey, body: { retainOriginal: true } });

    const settings = await call('PATCH', '/workspace/settings', {
      key: org.workspaceKey,
      body: { originalFileStoragePolicy: 'NEVER_STORE', applyToExisting: true },
    });
    const breakdown = await waitForOriginalBytes(org.workspaceKey, keptBytes.length);
    const plainAfter = await call('GET', `/markups/${plain.id}`, { key: org.workspaceKey });
    const keptAfter = await call('GET', `/markups/${kept.id}`, { key: org.workspaceKey });

    expect(settings.body.data).toEqual({ originalFileStoragePolicy: 'NEVER_STORE', appliedToExistingCount: 1, jobId: expect.any(String) });
    expect(breakdown.originals).toBe(keptBytes.length);
    expect(plainAfter.body.data.hasRetainedOriginal).toBe(false);
    expect(keptAfter.body.data).toMatchObject({ hasRetainedOriginal: true, retainOriginal: true });
  });

  it('archive-all archives every retained original and the breakdown drops them', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const first = await makeConvertedMarkup(org.workspaceKey, org.workspaceId, await tiffBytes(3, 3));
    await makeConvertedMarkup(org.workspaceKey, org.workspaceId, await tiffBytes(4, 2));
    await call('PATCH', `/markups/${first.id}/original`, { key: org.workspaceKey, body: { retainOriginal: true } });

    const archived = await call('POST', '/workspace/originals/archive-all', { key: org.workspaceKey });
    const breakdown = await waitForOriginalBytes(org.workspaceKey, 0);

    expect(archived.body).toEqual({ data: { archivedCount: 2, jobId: expect.any(String) } });
    expect(breakdown.originals).toBe(0);
  });
});

describe('NEVER_STORE gives up the original once conversion is done', () => {
  it('archives the original of a markup converted under NEVER_STORE, and keeps it under STORE_ALWAYS', async () => {
    const never = await makeOrganization();
    const always = await makeOrganization();
    await setPlan(never.organizationId, { storageFeatureEnabled: true });
    await call('PATCH', '/workspace/settings', { key: never.workspaceKey, body: { originalFileStoragePolicy: 'NEVER_STORE' } });

    const dropped = await makeConvertedMarkup(never.workspaceKey, never.workspaceId, await tiffBytes(4, 3));
    const kept = await makeConvertedMarkup(always.workspaceKey, always.workspaceId, await tiffBytes(4, 3));
    const settle = async (key: string, id: string) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const markup = (await call('GET', `/markups/${id}`, { key })).body.data;
        if (
          (markup.conversionStatus !== 'pending' && (markup.hasRetainedOriginal === false || key === always.workspaceKey)) ||
          Date.now() > deadline
        )
          return markup;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    const [droppedAfter, keptAfter] = await Promise.all([settle(never.workspaceKey, dropped.id), settle(always.workspaceKey, kept.id)]);

    expect(droppedAfter).toMatchObject({ conversionStatus: 'ready', isReady: true, hasRetainedOriginal: false });
    expect((await storageBreakdownOf(never.workspaceKey)).originals).toBe(0);
    expect(keptAfter).toMatchObject({ conversionStatus: 'ready', hasRetainedOriginal: true });
  }, 40_000);
});
