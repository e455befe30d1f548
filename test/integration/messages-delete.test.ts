import { describe, expect, it } from 'vitest';
import { markupPartition } from '../../shared/db/markup-records.js';
import { queryPrefix } from '../../shared/db/core/paging.js';
import { call, makeOrganization } from '../support/api.js';
import { addMember, makeConversation, patchMessage } from '../support/conversations.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { getThread } from '../support/thread-reads.js';
import { reply } from '../support/threads.js';

describe('DELETE /messages/:id: a reply goes, its writer or an admin removes it (Messages)', () => {
  it('lets the writer delete their own reply: 204, then it is gone from the thread and by id', async () => {
    const { org, thread } = await makeConversation();
    const writer = await addMember(org.workspaceId);
    const created = await reply(writer.key, thread.id, { content: 'Oops' });

    const response = await call('DELETE', `/messages/${created.id}`, { key: writer.key });
    const after = await getThread(org.workspaceKey, thread.id);
    const again = await call('DELETE', `/messages/${created.id}`, { key: writer.key });
    const edit = await patchMessage(writer.key, created.id, { content: 'x' });
    const read = await call('POST', `/messages/${created.id}/read`, { key: writer.key });

    expect(response.status).toBe(204);
    expect(response.body).toBe('');
    expect(after.messages.map((message: any) => message.id)).toEqual([thread.messages[0].id]);
    expect([again.status, edit.status, read.status]).toEqual([404, 404, 404]);
  });

  it("removes every reader's read marks of the deleted reply, and only those", async () => {
    const { org, thread } = await makeConversation();
    const writer = await addMember(org.workspaceId);
    const created = await reply(writer.key, thread.id, { content: 'Read me' });
    expect((await call('POST', `/messages/${created.id}/read`, { key: org.workspaceKey })).status).toBe(204);
    // What every reader's items mark: the thread (its mark's attributes) and each message (an attribute `m:<messageId>`).
    const marks = async () =>
      (await queryPrefix(markupPartition(thread.projectId), 'READ#', { consistent: true })).flatMap((item) => [
        ...(item.seenRevision === undefined ? [] : [item.threadId as string]),
        ...Object.keys(item)
          .filter((name) => name.startsWith('m:'))
          .map((name) => name.slice(2)),
      ]);
    expect((await marks()).filter((id) => id === created.id)).toHaveLength(2);

    expect((await call('DELETE', `/messages/${created.id}`, { key: writer.key })).status).toBe(204);

    const left = await marks();
    expect(left).not.toContain(created.id);
    expect(left).toEqual(expect.arrayContaining([thread.id, thread.messages[0].id]));
  });

  it("answers 403 to another contributor and a viewer; an admin may delete anyone's reply", async () => {
    const { org, thread } = await makeConversation();
    const writer = await addMember(org.workspaceId);
    const colleague = await addMember(org.workspaceId);
    const viewerKey = await makeMemberKey(org.workspaceId, 'viewer');
    const created = await reply(writer.key, thread.id, { content: 'Reply' });

    const byColleague = await call('DELETE', `/messages/${created.id}`, { key: colleague.key });
    const byViewer = await call('DELETE', `/messages/${created.id}`, { key: viewerKey });
    const byAdmin = await call('DELETE', `/messages/${created.id}`, { key: org.workspaceKey });

    expect(byColleague.status).toBe(403);
    expect(byViewer.status).toBe(403);
    expect(byAdmin.status).toBe(204);
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
  });

  it("answers 400 for a thread's first message: the thread is deleted instead", async () => {
    const { org, thread } = await makeConversation();

    const response = await call('DELETE', `/messages/${thread.messages[0].id}`, { key: org.workspaceKey });

    expect(response.status).toBe(400);
    expect(response.body.type).toBe('urn:review-board:problem:first-message');
    expect(response.body.detail).toContain(`DELETE /threads/${thread.id}`);
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
  });

  it('answers 404 for an unknown message', async () => {
    const org = await makeOrganization();

    const response = await call('DELETE', `/messages/${missingId}`, { key: org.workspaceKey });

    expect(response.status).toBe(404);
  });

  it('takes a deleted unread reply out of the unread count', async () => {
    const { org, thread } = await makeConversation();
    const reader = await addMember(org.workspaceId);
    await call('POST', `/threads/${thread.id}/read`, { key: reader.key });
    const created = await reply(org.workspaceKey, thread.id, { content: 'Soon gone' });
    const unread = await getThread(reader.key, thread.id);

    await call('DELETE', `/messages/${created.id}`, { key: org.workspaceKey });
    const after = await getThread(reader.key, thread.id);

    expect(unread).toMatchObject({ read: false, unreadMessageCount: 1 });
    expect(after).toMatchObject({ read: true, unreadMessageCount: 0 });
  });
});
