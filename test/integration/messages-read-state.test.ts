import { describe, expect, it } from 'vitest';
import { call, makeOrganization } from '../support/api.js';
import { addMember, makeConversation, patchMessage, type Member } from '../support/conversations.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { getThread } from '../support/thread-reads.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';

/** What one caller sees of a thread's read state, the same through GET /threads/:id and GET /threads. */
async function readStateFor(key: string, markupId: string, threadId: string) {
  const shape = (thread: any) => ({
    read: thread.read,
    unreadMessageCount: thread.unreadMessageCount,
    lastSeenAt: thread.userMetaData.lastSeenAt,
    messages: thread.messages.map((message: any) => ({ id: message.id, read: message.read, lastSeenAt: message.userMetaData.lastSeenAt })),
  });
  const single = await getThread(key, threadId);
  const list = await call('GET', '/threads', { key, query: { markupId } });
  expect(list.status).toBe(200);
  const listed = list.body.data.threads.find((thread: any) => thread.id === threadId);
  expect(shape(listed)).toEqual(shape(single));
  return shape(single);
}

describe('States and transitions: "Thread or message unread", per caller (Thread: read, unreadMessageCount, userMetaData)', () => {
  it('tracks what each of three users has read through replies, marks and edits', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const [a, b, c] = [await addMember(org.workspaceId), await addMember(org.workspaceId), await addMember(org.workspaceId)];
    const state = (who: Member) => readStateFor(who.key, markup.id, thread.id);
    const markThread = async (who: Member) => expect((await call('POST', `/threads/${thread.id}/read`, { key: who.key })).status).toBe(204);
    const markMessage = async (who: Member, id: string) =>
      expect((await call('POST', `/messages/${id}/read`, { key: who.key })).status).toBe(204);

    // A opens a thread: read for A, unread for B and C, who never saw it.
    const thread = await createThread(a.key, markup);
    const first = thread.messages[0].id;
    expect(thread).toMatchObject({ read: true, unreadMessageCount: 0 });
    expect(await state(a)).toMatchObject({ read: true, unreadMessageCount: 0, messages: [{ id: first, read: true }] });
    for (const other of [b, c]) {
      expect(await state(other)).toEqual({
        read: false,
        unreadMessageCount: 1,
        lastSeenAt: 0,
        messages: [{ id: first, read: false, lastSeenAt: 0 }],
      });
    }

    // B marks the thread: read for B with every message; C is unchanged.
    await markThread(b);
    const bAfterMark = await state(b);
    expect(bAfterMark).toMatchObject({ read: true, unreadMessageCount: 0, messages: [{ id: first, read: true }] });
    expect(bAfterMark.lastSeenAt).toBeGreaterThanOrEqual(thread.createdAt);
    expect(bAfterMark.messages[0].lastSeenAt).toBe(bAfterMark.lastSeenAt);
    expect(await state(c)).toMatchObject({ read: false, unreadMessageCount: 1, lastSeenAt: 0 });

    // A replies: the new message alone is unread for B; A has read it.
    const second = (await reply(a.key, thread.id, { content: 'Any news?' })).id;
    const bAfterReply = await state(b);
    expect(bAfterReply).toEqual({
      read: false,
      unreadMessageCount: 1,
      lastSeenAt: bAfterMark.lastSeenAt,
      messages: [
        { id: first, read: true, lastSeenAt: bAfterMark.lastSeenAt },
        { id: second, read: false, lastSeenAt: bAfterMark.lastSeenAt },
      ],
    });
    expect(await state(a)).toMatchObject({ read: true, unreadMessageCount: 0, messages: [{ read: true }, { read: true }] });
    expect(await state(c)).toMatchObject({ read: false, unreadMessageCount: 2 });

    // C marks the first message only: that message is read, the thread is not.
    await markMessage(c, first);
    const cAfterFirst = await state(c);
    expect(cAfterFirst).toMatchObject({
      read: false,
      unreadMessageCount: 1,
      messages: [
        { id: first, read: true },
        { id: second, read: false, lastSeenAt: 0 },
      ],
    });
    expect(cAfterFirst.messages[0].lastSeenAt).toBeGreaterThan(0);
    expect(cAfterFirst.lastSeenAt).toBe(cAfterFirst.messages[0].lastSeenAt);

    // C marks the other message too: nothing unread, yet the thread itself was never marked.
    await markMessage(c, second);
    const cAfterBoth = await state(c);
    expect(cAfterBoth).toMatchObject({ read: false, unreadMessageCount: 0, messages: [{ read: true }, { read: true }] });
    expect(cAfterBoth.lastSeenAt).toBeGreaterThanOrEqual(cAfterFirst.lastSeenAt);

    // C marks the thread: now it is read.
    await markThread(c);
    const cAfterThread = await state(c);
    expect(cAfterThread).toMatchObject({ read: true, unreadMessageCount: 0 });
    expect(cAfterThread.lastSeenAt).toBeGreaterThanOrEqual(cAfterBoth.lastSeenAt);

    // B catches up, then A edits the first message: unread again for B and C, read for A.
    await markThread(b);
    expect(await state(b)).toMatchObject({ read: true, unreadMessageCount: 0 });
    const edit = await patchMessage(a.key, first, { content: 'Please look at this again' });
    expect(edit.status).toBe(200);
    expect(edit.body.data.message.read).toBe(true);
    for (const other of [b, c]) {
      expect(await state(other)).toMatchObject({
        read: false,
        unreadMessageCount: 1,
        messages: [
          { id: first, read: false },
          { id: second, read: true },
        ],
      });
    }
    expect(await state(a)).toMatchObject({ read: true, unreadMessageCount: 0, messages: [{ read: true }, { read: true }] });

    // B cannot edit A's message (so it cannot make it unread for others).
    expect((await patchMessage(b.key, first, { content: 'Hijack' })).status).toBe(403);
  });

  it('lets a viewer mark threads and messages read (204)', async () => {
    const { org, markup, thread } = await makeConversation();
    const viewerKey = await makeMemberKey(org.workspaceId, 'viewer');
    const created = await reply(org.workspaceKey, thread.id, { content: 'Reply' });

    const messageMark = await call('POST', `/messages/${created.id}/read`, { key: viewerKey });
    const afterMessage = await readStateFor(viewerKey, markup.id, thread.id);
    const threadMark = await call('POST', `/threads/${thread.id}/read`, { key: viewerKey });
    const afterThread = await readStateFor(viewerKey, markup.id, thread.id);

    expect(messageMark.status).toBe(204);
    expect(afterMessage).toMatchObject({ read: false, unreadMessageCount: 1, messages: [{ read: false }, { read: true }] });
    expect(threadMark.status).toBe(204);
    expect(threadMark.body).toBe('');
    expect(afterThread).toMatchObject({ read: true, unreadMessageCount: 0 });
  });

  it('answers 404 for marking an unknown thread or message, 403 outside the workspace', async () => {
    const { org, thread } = await makeConversation();
    const stranger = await makeOrganization();

    const unknownThread = await call('POST', `/threads/${missingId}/read`, { key: org.workspaceKey });
    const unknownMessage = await call('POST', `/messages/${missingId}/read`, { key: org.workspaceKey });
    const foreignThread = await call('POST', `/threads/${thread.id}/read`, { key: stranger.workspaceKey });
    const foreignMessage = await call('POST', `/messages/${thread.messages[0].id}/read`, { key: stranger.workspaceKey });

    expect(unknownThread.status).toBe(404);
    expect(unknownMessage.status).toBe(404);
    expect(foreignThread.status).toBe(403);
    expect(foreignMessage.status).toBe(403);
  });
});
