import { describe, expect, it } from 'vitest';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call } from '../support/api.js';
import { makeConversation } from '../support/conversations.js';
import { getThread } from '../support/thread-reads.js';
import { reply } from '../support/threads.js';

describe('Authors: every API key acts as its own user (Thread and Message: user)', () => {
  it('gives two plain keys of one workspace distinct users with stable names', async () => {
    const { org, thread } = await makeConversation();
    const second = await createWorkspaceKey(org.workspaceId);

    const byFirst = await reply(org.workspaceKey, thread.id, { content: 'from the first key' });
    const bySecond = await reply(second.apiKey, thread.id, { content: 'from the second key' });
    const shownOnce = await getThread(second.apiKey, thread.id);
    const shownTwice = await getThread(org.workspaceKey, thread.id);

    expect(thread.user.id).toBe(org.workspaceKeyUserId);
    expect(byFirst.user.id).toBe(org.workspaceKeyUserId);
    expect(bySecond.user.id).toBe(second.userId);
    expect(bySecond.user.id).not.toBe(byFirst.user.id);
    for (const user of [byFirst.user, bySecond.user]) {
      expect(user).toEqual({
        id: expect.any(String),
        createdAt: expect.any(Number),
        modifiedAt: expect.any(Number),
        name: expect.stringMatching(/\S/),
        guest: false,
      });
    }
    expect(bySecond.user.name).not.toBe(byFirst.user.name);
    expect(shownOnce.messages.map((message: any) => message.user)).toEqual([thread.user, byFirst.user, bySecond.user]);
    expect(shownTwice.messages.map((message: any) => message.user)).toEqual(shownOnce.messages.map((message: any) => message.user));
    expect(shownOnce.user).toEqual(thread.user);
  });

  it('keeps read state per key: a reply by one key is unread for the other', async () => {
    const { org, thread } = await makeConversation();
    const second = await createWorkspaceKey(org.workspaceId);
    await call('POST', `/threads/${thread.id}/read`, { key: second.apiKey });

    await reply(org.workspaceKey, thread.id, { content: 'New' });

    expect(await getThread(second.apiKey, thread.id)).toMatchObject({ read: false, unreadMessageCount: 1 });
    expect(await getThread(org.workspaceKey, thread.id)).toMatchObject({ read: true, unreadMessageCount: 0 });
  });
});
