import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { put, transact } from '../../shared/db/core/transact.js';
import { markupTagItem, viewModeCountUpdate } from '../../shared/db/markup-records.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { missingId } from '../support/ids.js';
import { createMarkup } from '../support/url-markups.js';

describe('GET /markups/:id/tag (Markup tags)', () => {
  it('lists the workspace members as taggable and the users tagged in threads', async () => {
    const org = await makeOrganization();
    const member = await createWorkspaceKey(org.workspaceId, { email: 'Dana@Example.com', role: 'contributor' });
    const markup = await createMarkup(org.workspaceKey);

    const before = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });
    await transact([put(markupTagItem(markup.id, member.userId))]);
    const after = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });

    expect(before.status).toBe(200);
    expect(before.body.data).toEqual({
      taggable: [{ id: member.userId, name: 'Dana', email: 'dana@example.com', role: 'contributor' }],
      tagged: [],
    });
    expect(after.body.data.tagged).toEqual([{ id: member.userId, name: 'Dana', email: 'dana@example.com' }]);
  });

  it('answers 404 for an unknown markup', async () => {
    const org = await makeOrganization();

    expect((await call('GET', `/markups/${missingId}/tag`, { key: org.workspaceKey })).status).toBe(404);
  });
});

describe('GET /markups/:id/view-modes (listed as 204, answers 200 with data)', () => {
  it('lists desktop, tablet and mobile with stable ids and per-mode thread counts', async () => {
    const org = await makeOrganization();
    const [a, b] = await Promise.all([createMarkup(org.workspaceKey), createMarkup(org.workspaceKey)]);
    await transact([viewModeCountUpdate(a.id, VIEW_MODES[2]!.id, 2)]);

    const first = await call('GET', `/markups/${a.id}/view-modes`, { key: org.workspaceKey });
    const second = await call('GET', `/markups/${b.id}/view-modes`, { key: org.workspaceKey });

    expect(first.status).toBe(200);
    expect(first.body.data.projectViewModes.map((mode: { category: string }) => mode.category)).toEqual(['desktop', 'tablet', 'mobile']);
    expect(first.body.data.projectViewModes.map((mode: { threadCount: number }) => mode.threadCount)).toEqual([0, 0, 2]);
    expect(second.body.data.projectViewModes.map((mode: { id: string }) => mode.id)).toEqual(
      first.body.data.projectViewModes.map((mode: { id: string }) => mode.id),
    );
    for (const mode of first.body.data.projectViewModes) {
      expect(mode).toEqual({
        id: expect.any(String),
        category: expect.any(String),
        name: expect.any(String),
        width: expect.any(Number),
        height: expect.any(Number),
        threadCount: expect.any(Number),
      });
    }
  });

  it('drops the counters with the markup', async () => {
    const org = await makeOrganization();
    const markup = await createMarkup(org.workspaceKey);
    await transact([viewModeCountUpdate(markup.id, VIEW_MODES[0]!.id, 1)]);

    await call('DELETE', `/markups/${markup.id}`, { key: org.workspaceKey });

    expect((await call('GET', `/markups/${markup.id}/view-modes`, { key: org.workspaceKey })).status).toBe(404);
    const left = await getDb().send(
      new GetCommand({ TableName: getConfig().tableName, Key: { PK: `MARKUP#${markup.id}`, SK: `VIEWMODE#${VIEW_MODES[0]!.id}` } }),
    );
    expect(left.Item).toBeUndefined();
  });
});
