import { describe, expect, it } from 'vitest';
import { getItem } from '../../shared/db/items.js';
import { call, makeOrganization } from '../support/api.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';

describe('threads', () => {
  it('creates a webpage thread numbered 1 with its first message', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const thread = await createThread(org.workspaceKey, markup);
    expect(thread).toMatchObject({ number: 1, resolved: false, read: true, unreadMessageCount: 0, projectId: markup.id });
    expect(thread.messages).toHaveLength(1);
    expect(thread.messages[0]).toMatchObject({ content: 'Please look at this', read: true });
    const second = await reply(org.workspaceKey, thread.id, { content: 'Second' });
    expect(second.content).toBe('Second');
    const listed = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } });
    expect(listed.status).toBe(200);
    expect(listed.body.data.total).toBe(1);
    expect(listed.body.data.threads[0].messages).toHaveLength(2);
    expect((await getItem(markup.id))).toMatchObject({ activeThreads: 1 });
  });
});
