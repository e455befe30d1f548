import { describe, expect, it } from 'vitest';
import { listEvents } from '../../shared/db/events.js';
import { call, makeOrganization } from '../support/api.js';
import { addMember, makeConversation, patchMessage } from '../support/conversations.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { getThread } from '../support/thread-reads.js';
import { delta, reply } from '../support/threads.js';

describe('PATCH /messages/:id: its writer edits it (Messages)', () => {
  it('answers { message } with content edited and the Delta derived again', async () => {
    const { org, thread } = await makeConversation();
    const created = await reply(org.workspaceKey, thread.id, { content: 'Before' });

    const response = await patchMessage(org.workspaceKey, created.id, { content: 'After' });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body.data)).toEqual(['message']);
    expect(response.body.data.message).toMatchObject({
      id: created.id,
      content: 'After',
      message: 'After',
      messageJson: { ops: [{ insert: 'After\n' }] },
      read: true,
    });
    expect(response.body.data.message.createdAt).toBe(created.createdAt);
    expect(response.body.data.message.modifiedAt).toBeGreaterThan(created.modifiedAt);
    expect((await getThread(org.workspaceKey, thread.id)).messages[1]).toMatchObject({
      content: 'After',
      modifiedAt: response.body.data.message.modifiedAt,
    });
  });

  it('edits the Delta and derives the content again; mismatched content is a 400', async () => {
    const { org, thread } = await makeConversation();
    const created = await reply(org.workspaceKey, thread.id, { content: 'Before' });
    const messageJson = { ops: [{ insert: 'New ' }, { insert: 'words', attributes: { italic: true } }, { insert: '\n' }] };

    const edited = await patchMessage(org.workspaceKey, created.id, { message: messageJson });
    const mismatch = await patchMessage(org.workspaceKey, created.id, { message: delta('A'), content: 'B' });

    expect(edited.status).toBe(200);
    expect(edited.body.data.message).toMatchObject({ content: 'New words', message: 'New words', messageJson });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors[0].pointer).toBe('/body/content');
    expect((await getThread(org.workspaceKey, thread.id)).messages[1].content).toBe('New words');
  });

  it('edits the first message of a thread too, and refuses emptying a message', async () => {
    const { org, thread } = await makeConversation();

    const edited = await patchMessage(org.workspaceKey, thread.messages[0].id, { content: 'Reworded opener' });
    const emptied = await patchMessage(org.workspaceKey, thread.messages[0].id, { content: '' });

    expect(edited.status).toBe(200);
    expect(emptied.status).toBe(400);
    expect((await getThread(org.workspaceKey, thread.id)).messages[0].content).toBe('Reworded opener');
  });

  it("sets the thread's priority with priority and clears it with null", async () => {
    const { org, thread } = await makeConversation();
    const messageId = thread.messages[0].id;

    const set = await patchMessage(org.workspaceKey, messageId, { priority: 7 });
    const afterSet = await getThread(org.workspaceKey, thread.id);
    const cleared = await patchMessage(org.workspaceKey, messageId, { priority: null });
    const afterClear = await getThread(org.workspaceKey, thread.id);
    const tooHigh = await patchMessage(org.workspaceKey, messageId, { priority: 1001 });
    const fraction = await patchMessage(org.workspaceKey, messageId, { priority: 1.5 });

    expect(thread.priority).toBeNull();
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.data.message.content).toBe('Please look at this');
    expect(afterSet.priority).toBe(7);
    expect(cleared.status).toBe(200);
    expect(afterClear.priority).toBeNull();
    expect(tooHigh.status).toBe(400);
    expect(tooHigh.body.errors[0].pointer).toBe('/body/priority');
    expect(fraction.status).toBe(400);
  });

  it('leaves the message read for others when only the priority changes (the message itself did not change)', async () => {
    const { org, thread } = await makeConversation();
    const reader = await addMember(org.workspaceId);
    expect((await call('POST', `/threads/${thread.id}/read`, { key: reader.key })).status).toBe(204);

    const set = await patchMessage(org.workspaceKey, thread.messages[0].id, { priority: 3 });
    const seen = await getThread(reader.key, thread.id);

    expect(set.status).toBe(200);
    expect(set.body.data.message.modifiedAt).toBe(thread.messages[0].modifiedAt);
    expect(seen).toMatchObject({ priority: 3, read: true, unreadMessageCount: 0 });
  });

  it('answers 403 to anyone but the writer, even an admin or the owner', async () => {
    const { org, thread } = await makeConversation();
    const writer = await addMember(org.workspaceId);
    const colleague = await addMember(org.workspaceId);
    const viewerKey = await makeMemberKey(org.workspaceId, 'viewer');
    const created = await reply(writer.key, thread.id, { content: 'Mine' });

    const answers = await Promise.all(
      [org.workspaceKey, org.orgKey, colleague.key, viewerKey].map((key) => patchMessage(key, created.id, { content: 'Theirs' })),
    );
    const byWriter = await patchMessage(writer.key, created.id, { content: 'Still mine' });

    expect(answers.map((answer) => answer.status)).toEqual([403, 403, 403, 403]);
    expect(answers[0]!.body.type).toBe('urn:review-board:problem:not-message-author');
    expect(byWriter.status).toBe(200);
    expect(created.scopes).toContain('update-message');
    expect((await getThread(org.workspaceKey, thread.id)).messages[1].scopes).not.toContain('update-message');
  });

  it('answers 404 for an unknown message', async () => {
    const org = await makeOrganization();

    const response = await patchMessage(org.workspaceKey, missingId, { content: 'x' });

    expect(response.status).toBe(404);
    expect(response.body.detail).toContain(missingId);
  });

  it('records a comment_updated event with the thread and message ids', async () => {
    const { org, markup, thread } = await makeConversation();
    const created = await reply(org.workspaceKey, thread.id, { content: 'Before' });

    await patchMessage(org.workspaceKey, created.id, { content: 'After' });
    const events = await listEvents(org.workspaceId);

    expect(events.filter((event) => event.type === 'comment_updated')).toEqual([
      expect.objectContaining({ workspaceId: org.workspaceId, markupId: markup.id, threadId: thread.id, messageId: created.id }),
    ]);
  });
});
