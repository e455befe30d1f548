import { describe, expect, it } from 'vitest';
import { getItem } from '../../shared/db/items.js';
import { MAX_MESSAGES_PER_THREAD } from '../../shared/domain/comments/messages.js';
import { listEvents } from '../../shared/db/events.js';
import { call, makeOrganization } from '../support/api.js';
import { addMember, makeConversation, patchMessage, postMessage } from '../support/conversations.js';
import { setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { getThread } from '../support/thread-reads.js';
import { seedConversation } from '../support/thread-seed.js';
import { delta, makeTypedMarkup, reply } from '../support/threads.js';

describe('POST /threads/:threadId/messages: content and messageJson stay in step (Resources: Message)', () => {
  it('derives messageJson from content alone', async () => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'Looks good\r\n' });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({
      content: 'Looks good',
      message: 'Looks good',
      messageJson: { ops: [{ insert: 'Looks good\n' }] },
    });
  });

  it('derives content from a message Delta alone, reading mention embeds as @name', async () => {
    const { org, thread } = await makeConversation();
    const ada = await addMember(org.workspaceId);
    const messageJson = {
      ops: [
        { insert: 'Can ' },
        { insert: { mention: { id: ada.userId, name: 'Ada' } } },
        { insert: ' check', attributes: { bold: true } },
        { insert: '?\n' },
      ],
    };

    const response = await postMessage(org.workspaceKey, thread.id, { message: messageJson });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({
      content: 'Can @Ada check?',
      message: 'Can @Ada check?',
      messageJson,
      mentionIds: [ada.userId],
    });
  });

  it('accepts content and message sent together when they read the same', async () => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, {
      content: 'Two\nlines',
      message: { ops: [{ insert: 'Two\n' }, { insert: 'lines\n' }] },
    });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ content: 'Two\nlines', messageJson: { ops: [{ insert: 'Two\n' }, { insert: 'lines\n' }] } });
  });

  it('answers 400 at /body/content when content and message disagree, and stores nothing', async () => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'One thing', message: delta('Another thing') });

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(response.body.errors).toEqual([
      { pointer: '/body/content', detail: expect.stringContaining('does not read as the message Delta') },
    ]);
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
  });

  it.each([
    ['an empty body', {}],
    ['empty content', { content: '' }],
    ['content of newlines only', { content: '\n\r\n' }],
    ['an empty Delta', { message: { ops: [{ insert: '\n' }] } }],
    ['a Delta without ops', { message: { ops: [] } }],
    ['empty attachment and clip lists', { content: '', attachments: [], clipVideos: [] }],
  ])('answers 400 for a message that says nothing: %s', async (_name, body) => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, body);

    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ status: 400, type: 'urn:review-board:problem:empty-message' });
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
  });

  it('answers 400 naming the field for malformed bodies', async () => {
    const { org, thread } = await makeConversation();

    const notDelta = await postMessage(org.workspaceKey, thread.id, { message: 'plain string' });
    const badOp = await postMessage(org.workspaceKey, thread.id, { message: { ops: [{ insert: 42 }] } });
    const badMentions = await postMessage(org.workspaceKey, thread.id, { content: 'x', mentionIds: ['not-a-uuid'] });
    const noBody = await call('POST', `/threads/${thread.id}/messages`, { key: org.workspaceKey });

    expect(notDelta.status).toBe(400);
    expect(notDelta.body.errors[0].pointer).toBe('/body/message');
    expect(badOp.status).toBe(400);
    expect(badOp.body.errors[0].pointer).toBe('/body/message/ops/0/insert');
    expect(badMentions.status).toBe(400);
    expect(badMentions.body.errors[0].pointer).toBe('/body/mentionIds/0');
    expect(noBody.status).toBe(400);
  });

  it('answers the public message with exactly the fields and types of the spec', async () => {
    const { org, thread } = await makeConversation();
    const writer = await addMember(org.workspaceId);

    const response = await postMessage(writer.key, thread.id, { content: 'Shape check' });
    const message = response.body.data;

    expect(response.status).toBe(200);
    expect(Object.keys(message).sort()).toEqual(
      [
        'assignedRoleSlugs',
        'attachments',
        'clipVideos',
        'content',
        'createdAt',
        'id',
        'mentionIds',
        'message',
        'messageJson',
        'modifiedAt',
        'read',
        'scopes',
        'threadId',
        'user',
        'userMetaData',
      ].sort(),
    );
    expect(message.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof message.createdAt).toBe('number');
    expect(message.modifiedAt).toBe(message.createdAt);
    expect(message.createdAt).toBeGreaterThanOrEqual(thread.createdAt);
    expect(message.scopes).toEqual(expect.arrayContaining(['view-message', 'update-message', 'delete-message']));
    expect(message.assignedRoleSlugs).toEqual([]);
    expect(message.threadId).toBe(thread.id);
    expect(message.user).toEqual({
      id: writer.userId,
      createdAt: expect.any(Number),
      modifiedAt: expect.any(Number),
      name: writer.name,
      guest: false,
    });
    expect(message).toMatchObject({
      attachments: [],
      clipVideos: [],
      mentionIds: [],
      read: true,
      content: 'Shape check',
      message: 'Shape check',
    });
    expect(message.userMetaData).toEqual({ lastSeenAt: message.createdAt });
  });

  it('shows the reply in the thread, last, with the thread and markup activity moved', async () => {
    const { org, markup, thread } = await makeConversation();

    const created = await reply(org.workspaceKey, thread.id, { content: 'Second' });
    const after = await getThread(org.workspaceKey, thread.id);
    const listed = await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id, order: 'activity' } });

    expect(after.messages.map((message: any) => message.id)).toEqual([thread.messages[0].id, created.id]);
    expect(after.messages[1]).toEqual({ ...created, attachments: [], clipVideos: [] });
    expect(after.lastActivityAt).toBe(created.createdAt);
    expect(listed.body.data.threads[0].lastActivityAt).toBe(created.createdAt);
    expect((await getItem(markup.id))?.activityAt).toBe(created.createdAt);
  });

  it('answers 404 for an unknown thread and 400 for a malformed thread id', async () => {
    const org = await makeOrganization();

    const unknown = await postMessage(org.workspaceKey, missingId, { content: 'Hello' });
    const malformed = await postMessage(org.workspaceKey, 'not-an-id', { content: 'Hello' });

    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toContain(missingId);
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0].pointer).toBe('/params/id');
  });

  it('answers 403 to a viewer and to a key of another organization, 401 without a key', async () => {
    const { org, thread } = await makeConversation();
    const viewerKey = await makeMemberKey(org.workspaceId, 'viewer');
    const stranger = await makeOrganization();

    const asViewer = await postMessage(viewerKey, thread.id, { content: 'Hello' });
    const asStranger = await postMessage(stranger.workspaceKey, thread.id, { content: 'Hello' });
    const anonymous = await call('POST', `/threads/${thread.id}/messages`, { body: { content: 'Hello' } });

    expect(asViewer.status).toBe(403);
    expect(asViewer.body.type).toBe('urn:review-board:problem:insufficient-role');
    expect(asStranger.status).toBe(403);
    expect(anonymous.status).toBe(401);
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
  });

  it('refuses replies with 403 while the markup is read-only and accepts them again once resumed', async () => {
    const { org, markup, thread } = await makeConversation();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });

    const paused = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: true } });
    const refused = await postMessage(org.workspaceKey, thread.id, { content: 'While paused' });
    const whilePaused = await getThread(org.workspaceKey, thread.id);
    const resumed = await call('PATCH', `/markups/${markup.id}/read-only`, { key: org.workspaceKey, body: { readOnly: false } });
    const accepted = await postMessage(org.workspaceKey, thread.id, { content: 'After resuming' });

    expect(paused.status).toBe(200);
    expect(refused.status).toBe(403);
    expect(refused.body.type).toBe('urn:review-board:problem:markup-read-only');
    expect(whilePaused.messages).toHaveLength(1);
    expect(whilePaused.scopes).not.toContain('create-message');
    expect(resumed.status).toBe(200);
    expect(accepted.status).toBe(200);
    expect((await getThread(org.workspaceKey, thread.id)).messages.map((message: any) => message.content)).toEqual([
      'Please look at this',
      'After resuming',
    ]);
  });

  it('records a comment_reply_created event with the thread and message ids', async () => {
    const { org, markup, thread } = await makeConversation();

    const created = await reply(org.workspaceKey, thread.id, { content: 'Evented' });
    const events = await listEvents(org.workspaceId);

    expect(events.filter((event) => event.type === 'comment_reply_created')).toEqual([
      expect.objectContaining({
        type: 'comment_reply_created',
        workspaceId: org.workspaceId,
        markupId: markup.id,
        threadId: thread.id,
        messageId: created.id,
      }),
    ]);
  });
});

describe('mentionIds: only members of the workspace can be mentioned (Resources: Message)', () => {
  it('accepts members, lists them in mentionIds and as tagged on the markup', async () => {
    const { org, markup, thread } = await makeConversation();
    const ada = await addMember(org.workspaceId, 'contributor');
    const grace = await addMember(org.workspaceId, 'viewer');

    const taggable = (await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey })).body.data.taggable.map(
      (user: any) => user.id,
    );
    const response = await postMessage(org.workspaceKey, thread.id, {
      content: 'Please both look',
      mentionIds: [ada.userId, grace.userId, ada.userId],
    });
    const tags = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });

    expect(taggable).toEqual(expect.arrayContaining([ada.userId, grace.userId]));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.mentionIds).toEqual([ada.userId, grace.userId]);
    expect(tags.status).toBe(200);
    expect(tags.body.data.tagged.map((user: any) => user.id).sort()).toEqual([ada.userId, grace.userId].sort());
    expect(tags.body.data.tagged.find((user: any) => user.id === ada.userId)).toEqual({
      id: ada.userId,
      name: ada.name,
      email: `${ada.name}@example.com`,
    });
  });

  it('answers 400 at /body/mentionIds for a user who is not a member, and tags nobody', async () => {
    const { org, markup, thread } = await makeConversation();
    const member = await addMember(org.workspaceId);
    const other = await makeOrganization();
    const outsider = await addMember(other.workspaceId);

    const unknownUser = await postMessage(org.workspaceKey, thread.id, { content: 'Hi', mentionIds: [missingId] });
    const otherWorkspace = await postMessage(org.workspaceKey, thread.id, { content: 'Hi', mentionIds: [member.userId, outsider.userId] });
    const tags = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });

    expect(unknownUser.status).toBe(400);
    expect(unknownUser.body.errors).toEqual([{ pointer: '/body/mentionIds', detail: expect.stringContaining(missingId) }]);
    expect(otherWorkspace.status).toBe(400);
    expect(otherWorkspace.body.errors[0].detail).toContain(outsider.userId);
    expect(otherWorkspace.body.errors[0].detail).not.toContain(member.userId);
    expect(tags.body.data.tagged).toEqual([]);
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
  });

  it('validates mentions inside a Delta the same way, at /body/message', async () => {
    const { org, markup, thread } = await makeConversation();
    const member = await addMember(org.workspaceId);
    const mentioning = (id: string, name: string) => ({
      ops: [{ insert: 'cc ' }, { insert: { mention: { id, name } } }, { insert: '\n' }],
    });

    const refused = await postMessage(org.workspaceKey, thread.id, { message: mentioning(missingId, 'Ghost') });
    const accepted = await postMessage(org.workspaceKey, thread.id, { message: mentioning(member.userId, 'Member') });
    const tags = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });

    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ pointer: '/body/message', detail: expect.stringContaining(missingId) }]);
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toMatchObject({ content: 'cc @Member', mentionIds: [member.userId] });
    expect(tags.body.data.tagged.map((user: any) => user.id)).toEqual([member.userId]);
  });

  it('merges mentionIds with the mentions of the Delta', async () => {
    const { org, thread } = await makeConversation();
    const [one, two] = [await addMember(org.workspaceId), await addMember(org.workspaceId)];

    const response = await postMessage(org.workspaceKey, thread.id, {
      message: { ops: [{ insert: { mention: { id: one.userId, name: 'One' } } }, { insert: '\n' }] },
      mentionIds: [two.userId],
    });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.mentionIds.sort()).toEqual([one.userId, two.userId].sort());
  });

  it('keeps the mentions of the Delta when an edit sends only mentionIds', async () => {
    const { org, thread } = await makeConversation();
    const [inText, added] = [await addMember(org.workspaceId), await addMember(org.workspaceId)];
    const created = await reply(org.workspaceKey, thread.id, {
      message: { ops: [{ insert: 'ask ' }, { insert: { mention: { id: inText.userId, name: 'Ask' } } }, { insert: '\n' }] },
    });

    const edited = await patchMessage(org.workspaceKey, created.id, { mentionIds: [added.userId] });
    const refused = await patchMessage(org.workspaceKey, created.id, { mentionIds: [missingId] });

    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.data.message.content).toBe('ask @Ask');
    expect(edited.body.data.message.mentionIds.sort()).toEqual([inText.userId, added.userId].sort());
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].pointer).toBe('/body/mentionIds');
  });

  it('refuses a reply past 2,000 messages in a thread with 409 message-limit, and the thread still reads and takes edits', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    // Written straight to the table: 1,999 replies through the API would take minutes.
    const [seeded] = await seedConversation(markup, {
      count: 1,
      authorIds: [org.workspaceKeyUserId],
      messagesPerThread: MAX_MESSAGES_PER_THREAD - 1,
    });
    const threadId = seeded!.thread.id;

    const last = await postMessage(org.workspaceKey, threadId, { content: 'The last one' });
    const refused = await postMessage(org.workspaceKey, threadId, { content: 'One too many' });
    const edited = await patchMessage(org.workspaceKey, last.body.data.id, { content: 'Still editable' });
    const read = await call('GET', `/threads/${threadId}`, { key: org.workspaceKey });

    expect(last.status, JSON.stringify(last.body)).toBe(200);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ type: expect.stringMatching(/message-limit$/), status: 409 });
    expect(refused.body.detail).toMatch(/2,000 messages.*start a new thread/);
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(read.status).toBe(200);
    expect(read.body.data.messages).toHaveLength(MAX_MESSAGES_PER_THREAD);
  }, 90_000);
});
