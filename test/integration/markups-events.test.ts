import { describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/events.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';

describe('events recorded for webhooks (DESIGN.md: which operation emits which event)', () => {
  it('records markup_created for a creation and set_project_read_only only when read-only really changes', async () => {
    const org = await makeOrganization();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const created = await call('POST', '/markups/url', { key: org.workspaceKey, body: { url: 'https://example.com/events' } });
    const id = created.body.data.id;

    await call('PATCH', `/markups/${id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await call('PATCH', `/markups/${id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    await call('PATCH', `/markups/${id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } });
    const events = await listEvents(org.workspaceId);

    expect(events.map((event) => [event.type, event.markupId])).toEqual([
      ['markup_created', id],
      ['set_project_read_only', id],
      ['set_project_read_only', id],
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });
});
