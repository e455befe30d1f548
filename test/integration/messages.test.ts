import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import { listEvents } from '../../shared/db/events.js';
import { markupPartition } from '../../shared/db/markup-records.js';
import { queryPrefix } from '../../shared/db/paging.js';
import type { Role } from '../../shared/db/users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { setPlan } from '../support/fixtures.js';
import { makeMemberKey } from '../support/items.js';
import { createThread, delta, makeTypedMarkup, reply } from '../support/threads.js';
import { pngBytes, uploadFile } from '../support/uploads.js';
import { missingId } from '../support/ids.js';
import { storageBreakdownOf } from '../support/workspaces.js';

type Org = Awaited<ReturnType<typeof makeOrganization>>;

interface Member {
  key: string;
  userId: string;
  name: string;
}

/** A workspace member acting through its own key: a distinct user with `role` (mentionable). */
async function addMember(workspaceId: string, role: Role = 'contributor'): Promise<Member> {
  const local = `${role}-${randomUUID().slice(0, 8)}`;
  const issued = await createWorkspaceKey(workspaceId, { email: `${local}@example.com`, role });
  return { key: issued.apiKey, userId: issued.userId, name: local };
}

/** An organization with a webpage markup and a thread opened by the workspace key (an admin). */
async function makeConversation(): Promise<{ org: Org; markup: MarkupRecord; thread: any }> {
  const org = await makeOrganization();
  const markup = await makeTypedMarkup(org, 'webpage');
  const thread = await createThread(org.workspaceKey, markup);
  return { org, markup, thread };
}

const postMessage = (key: string, threadId: string, body: unknown) => call('POST', `/threads/${threadId}/messages`, { key, body });
const patchMessage = (key: string, messageId: string, body: unknown) => call('PATCH', `/messages/${messageId}`, { key, body });
const getThread = async (key: string, threadId: string) => {
  const response = await call('GET', `/threads/${threadId}`, { key });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
};

/** A confirmed `message_attachment` upload for a markup. */
async function uploadAttachment(key: string, markupId: string, bytes: Buffer, options: { confirm?: boolean; filename?: string; contentType?: string } = {}) {
  return uploadFile(
    key,
    { resourceType: 'message_attachment', resourceId: markupId, filename: options.filename ?? 'notes.txt', contentType: options.contentType ?? 'text/plain', bytes },
    { confirm: options.confirm },
  );
}

const CLIP = { title: 'Walkthrough', sharedUrl: 'https://clips.example.com/share/abc123', width: 1280, height: 720 };

describe('POST /threads/:threadId/messages: content and messageJson stay in step (Resources: Message)', () => {
  it('derives messageJson from content alone', async () => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'Looks good\r\n' });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ content: 'Looks good', message: 'Looks good', messageJson: { ops: [{ insert: 'Looks good\n' }] } });
  });

  it('derives content from a message Delta alone, reading mention embeds as @name', async () => {
    const { org, thread } = await makeConversation();
    const ada = await addMember(org.workspaceId);
    const messageJson = { ops: [{ insert: 'Can ' }, { insert: { mention: { id: ada.userId, name: 'Ada' } } }, { insert: ' check', attributes: { bold: true } }, { insert: '?\n' }] };

    const response = await postMessage(org.workspaceKey, thread.id, { message: messageJson });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ content: 'Can @Ada check?', message: 'Can @Ada check?', messageJson, mentionIds: [ada.userId] });
  });

  it('accepts content and message sent together when they read the same', async () => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'Two\nlines', message: { ops: [{ insert: 'Two\n' }, { insert: 'lines\n' }] } });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ content: 'Two\nlines', messageJson: { ops: [{ insert: 'Two\n' }, { insert: 'lines\n' }] } });
  });

  it('answers 400 at /body/content when content and message disagree, and stores nothing', async () => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'One thing', message: delta('Another thing') });

    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(response.body.errors).toEqual([{ pointer: '/body/content', detail: expect.stringContaining('does not read as the message Delta') }]);
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
      ['assignedRoleSlugs', 'attachments', 'clipVideos', 'content', 'createdAt', 'id', 'mentionIds', 'message', 'messageJson', 'modifiedAt', 'read', 'scopes', 'threadId', 'user', 'userMetaData'].sort(),
    );
    expect(message.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof message.createdAt).toBe('number');
    expect(message.modifiedAt).toBe(message.createdAt);
    expect(message.createdAt).toBeGreaterThanOrEqual(thread.createdAt);
    expect(message.scopes).toEqual(expect.arrayContaining(['view-message', 'update-message', 'delete-message']));
    expect(message.assignedRoleSlugs).toEqual([]);
    expect(message.threadId).toBe(thread.id);
    expect(message.user).toEqual({ id: writer.userId, createdAt: expect.any(Number), modifiedAt: expect.any(Number), name: writer.name, guest: false });
    expect(message).toMatchObject({ attachments: [], clipVideos: [], mentionIds: [], read: true, content: 'Shape check', message: 'Shape check' });
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
    expect((await getThread(org.workspaceKey, thread.id)).messages.map((message: any) => message.content)).toEqual(['Please look at this', 'After resuming']);
  });

  it('records a comment_reply_created event with the thread and message ids', async () => {
    const { org, markup, thread } = await makeConversation();

    const created = await reply(org.workspaceKey, thread.id, { content: 'Evented' });
    const events = await listEvents(org.workspaceId);

    expect(events.filter((event) => event.type === 'comment_reply_created')).toEqual([
      expect.objectContaining({ type: 'comment_reply_created', workspaceId: org.workspaceId, markupId: markup.id, threadId: thread.id, messageId: created.id }),
    ]);
  });
});

describe('mentionIds: only members of the workspace can be mentioned (Resources: Message)', () => {
  it('accepts members, lists them in mentionIds and as tagged on the markup', async () => {
    const { org, markup, thread } = await makeConversation();
    const ada = await addMember(org.workspaceId, 'contributor');
    const grace = await addMember(org.workspaceId, 'viewer');

    const taggable = (await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey })).body.data.taggable.map((user: any) => user.id);
    const response = await postMessage(org.workspaceKey, thread.id, { content: 'Please both look', mentionIds: [ada.userId, grace.userId, ada.userId] });
    const tags = await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey });

    expect(taggable).toEqual(expect.arrayContaining([ada.userId, grace.userId]));
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.mentionIds).toEqual([ada.userId, grace.userId]);
    expect(tags.status).toBe(200);
    expect(tags.body.data.tagged.map((user: any) => user.id).sort()).toEqual([ada.userId, grace.userId].sort());
    expect(tags.body.data.tagged.find((user: any) => user.id === ada.userId)).toEqual({ id: ada.userId, name: ada.name, email: `${ada.name}@example.com` });
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
    const mentioning = (id: string, name: string) => ({ ops: [{ insert: 'cc ' }, { insert: { mention: { id, name } } }, { insert: '\n' }] });

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
    const created = await reply(org.workspaceKey, thread.id, { message: { ops: [{ insert: 'ask ' }, { insert: { mention: { id: inText.userId, name: 'Ask' } } }, { insert: '\n' }] } });

    const edited = await patchMessage(org.workspaceKey, created.id, { mentionIds: [added.userId] });
    const refused = await patchMessage(org.workspaceKey, created.id, { mentionIds: [missingId] });

    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.data.message.content).toBe('ask @Ask');
    expect(edited.body.data.message.mentionIds.sort()).toEqual([inText.userId, added.userId].sort());
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].pointer).toBe('/body/mentionIds');
  });
});

describe('attachments: confirmed message_attachment uploads of the markup, each used once (Resources: Message)', () => {
  it('attaches a confirmed upload with the spec fields and a URL that returns the bytes', async () => {
    const { org, markup, thread } = await makeConversation();
    const bytes = Buffer.from('meeting notes\n');
    const upload = await uploadAttachment(org.workspaceKey, markup.id, bytes, { filename: 'notes.txt' });

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'See attached', attachments: [{ fileId: upload.fileId }] });
    const message = response.body.data;
    const attachment = message.attachments[0];
    const download = await fetch(attachment.url);

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(message.attachments).toHaveLength(1);
    expect(Object.keys(attachment).sort()).toEqual(['createdAt', 'etag', 'filesize', 'id', 'messageId', 'mimeType', 'modifiedAt', 'originalFilename', 'url'].sort());
    expect(attachment).toMatchObject({
      id: upload.fileId,
      createdAt: message.createdAt,
      modifiedAt: message.createdAt,
      messageId: message.id,
      etag: upload.etag,
      mimeType: 'text/plain',
      originalFilename: 'notes.txt',
      filesize: bytes.length,
    });
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer())).toEqual(bytes);
    const shown = (await getThread(org.workspaceKey, thread.id)).messages[1].attachments[0];
    expect({ ...shown, url: undefined }).toEqual({ ...attachment, url: undefined });
  });

  it('accepts a message of attachments alone (no text)', async () => {
    const { org, markup, thread } = await makeConversation();
    const upload = await uploadAttachment(org.workspaceKey, markup.id, await pngBytes(), { filename: 'shot.png', contentType: 'image/png' });

    const response = await postMessage(org.workspaceKey, thread.id, { attachments: [{ fileId: upload.fileId }] });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data).toMatchObject({ content: '', messageJson: { ops: [{ insert: '\n' }] } });
    expect(response.body.data.attachments.map((attachment: any) => attachment.mimeType)).toEqual(['image/png']);
  });

  it('answers 400 when the upload is already attached, or listed twice', async () => {
    const { org, markup, thread } = await makeConversation();
    const upload = await uploadAttachment(org.workspaceKey, markup.id, Buffer.from('once'));
    const fresh = await uploadAttachment(org.workspaceKey, markup.id, Buffer.from('twice'));
    await reply(org.workspaceKey, thread.id, { content: 'first use', attachments: [{ fileId: upload.fileId }] });

    const again = await postMessage(org.workspaceKey, thread.id, { content: 'second use', attachments: [{ fileId: upload.fileId }] });
    const twice = await postMessage(org.workspaceKey, thread.id, { content: 'listed twice', attachments: [{ fileId: fresh.fileId }, { fileId: fresh.fileId }] });

    expect(again.status).toBe(400);
    expect(again.body.type).toBe('urn:review-board:problem:file-already-used');
    expect(twice.status).toBe(400);
    expect(twice.body.errors[0].pointer).toBe('/body/attachments');
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(2);
  });

  it('answers 400 for an upload that was never confirmed, and for an unknown fileId', async () => {
    const { org, markup, thread } = await makeConversation();
    const unconfirmed = await uploadAttachment(org.workspaceKey, markup.id, Buffer.from('pending'), { confirm: false });

    const pending = await postMessage(org.workspaceKey, thread.id, { content: 'x', attachments: [{ fileId: unconfirmed.fileId }] });
    const unknown = await postMessage(org.workspaceKey, thread.id, { content: 'x', attachments: [{ fileId: missingId }] });

    expect(pending.status).toBe(400);
    expect(pending.body.type).toBe('urn:review-board:problem:upload-not-confirmed');
    expect(unknown.status).toBe(400);
    expect(unknown.body.type).toBe('urn:review-board:problem:unknown-file');
  });

  it('answers 400 for an upload made for another markup or as another resource type', async () => {
    const { org, markup, thread } = await makeConversation();
    const otherMarkup = await makeTypedMarkup(org, 'webpage');
    const forOtherMarkup = await uploadAttachment(org.workspaceKey, otherMarkup.id, Buffer.from('elsewhere'));
    const screenshot = await uploadFile(org.workspaceKey, { resourceType: 'thread_screenshot', resourceId: markup.id, filename: 'shot.png', contentType: 'image/png', bytes: await pngBytes() });
    const markupAsset = await uploadFile(org.workspaceKey, { filename: 'page.png', contentType: 'image/png', bytes: await pngBytes() });

    const answers = await Promise.all(
      [forOtherMarkup, screenshot, markupAsset].map((upload) => postMessage(org.workspaceKey, thread.id, { content: 'x', attachments: [{ fileId: upload.fileId }] })),
    );

    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body.type).toBe('urn:review-board:problem:wrong-resource');
      expect(answer.body.detail).toContain(markup.id);
    }
  });

  it('answers 403 for an upload made in another workspace', async () => {
    const { org, thread } = await makeConversation();
    const other = await makeOrganization();
    const otherMarkup = await makeTypedMarkup(other, 'webpage');
    const foreign = await uploadAttachment(other.workspaceKey, otherMarkup.id, Buffer.from('foreign'));

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'x', attachments: [{ fileId: foreign.fileId }] });

    expect(response.status).toBe(403);
    expect(response.body.type).toBe('urn:review-board:problem:file-in-another-workspace');
  });

  it('keeps listed attachments and adds new ones on edit; a kept upload is not "already used"', async () => {
    const { org, markup, thread } = await makeConversation();
    const first = await uploadAttachment(org.workspaceKey, markup.id, Buffer.from('first'), { filename: 'a.txt' });
    const second = await uploadAttachment(org.workspaceKey, markup.id, Buffer.from('second'), { filename: 'b.txt' });
    const created = await reply(org.workspaceKey, thread.id, { content: 'files', attachments: [{ fileId: first.fileId }] });

    const edited = await patchMessage(org.workspaceKey, created.id, { attachments: [{ fileId: first.fileId }, { fileId: second.fileId }] });
    const untouched = await patchMessage(org.workspaceKey, created.id, { content: 'files, renamed' });

    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.data.message.attachments.map((attachment: any) => attachment.originalFilename)).toEqual(['a.txt', 'b.txt']);
    expect(edited.body.data.message.attachments[0].createdAt).toBe(created.attachments[0].createdAt);
    expect(untouched.body.data.message.attachments.map((attachment: any) => attachment.id)).toEqual([first.fileId, second.fileId]);
  });

  it('counts attachment bytes in the storage breakdown until an edit drops them or the message is deleted', async () => {
    const { org, markup, thread } = await makeConversation();
    await setPlan(org.organizationId, { storageFeatureEnabled: true });
    const before = await storageBreakdownOf(org.workspaceKey);
    const dropped = Buffer.from('dropped by an edit');
    const deleted = Buffer.from('deleted with its message, a little longer');

    const first = await uploadAttachment(org.workspaceKey, markup.id, dropped);
    const second = await uploadAttachment(org.workspaceKey, markup.id, deleted);
    const kept = await reply(org.workspaceKey, thread.id, { content: 'one', attachments: [{ fileId: first.fileId }] });
    const removed = await reply(org.workspaceKey, thread.id, { content: 'two', attachments: [{ fileId: second.fileId }] });
    const counted = await storageBreakdownOf(org.workspaceKey);
    const edit = await patchMessage(org.workspaceKey, kept.id, { attachments: [] });
    const afterEdit = await storageBreakdownOf(org.workspaceKey);
    const deletion = await call('DELETE', `/messages/${removed.id}`, { key: org.workspaceKey });
    const afterDelete = await storageBreakdownOf(org.workspaceKey);

    expect(counted.attachments).toBe(before.attachments! + dropped.length + deleted.length);
    expect(counted.total).toBe(before.total! + dropped.length + deleted.length);
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(edit.body.data.message.attachments).toEqual([]);
    expect(afterEdit.attachments).toBe(before.attachments! + deleted.length);
    expect(deletion.status).toBe(204);
    expect(afterDelete.attachments).toBe(before.attachments);
    expect(afterDelete.total).toBe(before.total);
    expect((await getThread(org.workspaceKey, thread.id)).messages.find((message: any) => message.id === kept.id).attachments).toEqual([]);
  });
});

describe('clipVideos: recorded clips linked by address (Resources: Message)', () => {
  it('round-trips clip videos with the spec fields', async () => {
    const { org, thread } = await makeConversation();
    const second = { title: 'Bug repro', sharedUrl: 'http://clips.example.com/v/2', width: 640, height: 360 };

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'Watch these', clipVideos: [CLIP, second] });
    const message = response.body.data;
    const shown = (await getThread(org.workspaceKey, thread.id)).messages[1];

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(message.clipVideos).toEqual([
      { id: expect.any(String), createdAt: message.createdAt, modifiedAt: message.createdAt, messageId: message.id, ...CLIP },
      { id: expect.any(String), createdAt: message.createdAt, modifiedAt: message.createdAt, messageId: message.id, ...second },
    ]);
    expect(message.clipVideos[0].id).not.toBe(message.clipVideos[1].id);
    expect(shown.clipVideos).toEqual(message.clipVideos);
  });

  it('accepts a message of clip videos alone and replaces them on edit', async () => {
    const { org, thread } = await makeConversation();
    const created = await reply(org.workspaceKey, thread.id, { clipVideos: [CLIP] });

    const edited = await patchMessage(org.workspaceKey, created.id, { clipVideos: [{ ...CLIP, title: 'Retitled' }] });
    const emptied = await patchMessage(org.workspaceKey, created.id, { clipVideos: [] });

    expect(created.content).toBe('');
    expect(edited.status).toBe(200);
    expect(edited.body.data.message.clipVideos.map((clip: any) => clip.title)).toEqual(['Retitled']);
    expect(emptied.status).toBe(400);
    expect(emptied.body.type).toBe('urn:review-board:problem:empty-message');
  });

  it.each([
    ['not a URL', { sharedUrl: 'not a url' }, '/body/clipVideos/0/sharedUrl'],
    ['a script address', { sharedUrl: 'javascript:alert(1)' }, '/body/clipVideos/0/sharedUrl'],
    ['a negative width', { width: -1 }, '/body/clipVideos/0/width'],
    ['a missing title', { title: undefined }, '/body/clipVideos/0/title'],
  ])('answers 400 for a clip video with %s', async (_name, change, pointer) => {
    const { org, thread } = await makeConversation();

    const response = await postMessage(org.workspaceKey, thread.id, { content: 'clip', clipVideos: [{ ...CLIP, ...change }] });

    expect(response.status).toBe(400);
    expect(response.body.errors[0].pointer).toBe(pointer);
  });
});

describe('PATCH /messages/:id: its writer edits it (Messages)', () => {
  it('answers { message } with content edited and the Delta derived again', async () => {
    const { org, thread } = await makeConversation();
    const created = await reply(org.workspaceKey, thread.id, { content: 'Before' });

    const response = await patchMessage(org.workspaceKey, created.id, { content: 'After' });

    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body.data)).toEqual(['message']);
    expect(response.body.data.message).toMatchObject({ id: created.id, content: 'After', message: 'After', messageJson: { ops: [{ insert: 'After\n' }] }, read: true });
    expect(response.body.data.message.createdAt).toBe(created.createdAt);
    expect(response.body.data.message.modifiedAt).toBeGreaterThan(created.modifiedAt);
    expect((await getThread(org.workspaceKey, thread.id)).messages[1]).toMatchObject({ content: 'After', modifiedAt: response.body.data.message.modifiedAt });
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

    const answers = await Promise.all([org.workspaceKey, org.orgKey, colleague.key, viewerKey].map((key) => patchMessage(key, created.id, { content: 'Theirs' })));
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
    const marks = async () => (await queryPrefix(markupPartition(thread.projectId), 'READ#', { consistent: true })).map((mark) => mark.subjectId);
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
    const markMessage = async (who: Member, id: string) => expect((await call('POST', `/messages/${id}/read`, { key: who.key })).status).toBe(204);

    // A opens a thread: read for A, unread for B and C, who never saw it.
    const thread = await createThread(a.key, markup);
    const first = thread.messages[0].id;
    expect(thread).toMatchObject({ read: true, unreadMessageCount: 0 });
    expect(await state(a)).toMatchObject({ read: true, unreadMessageCount: 0, messages: [{ id: first, read: true }] });
    for (const other of [b, c]) {
      expect(await state(other)).toEqual({ read: false, unreadMessageCount: 1, lastSeenAt: 0, messages: [{ id: first, read: false, lastSeenAt: 0 }] });
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
    expect(cAfterFirst).toMatchObject({ read: false, unreadMessageCount: 1, messages: [{ id: first, read: true }, { id: second, read: false, lastSeenAt: 0 }] });
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
      expect(await state(other)).toMatchObject({ read: false, unreadMessageCount: 1, messages: [{ id: first, read: false }, { id: second, read: true }] });
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
      expect(user).toEqual({ id: expect.any(String), createdAt: expect.any(Number), modifiedAt: expect.any(Number), name: expect.stringMatching(/\S/), guest: false });
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
