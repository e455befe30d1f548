import { describe, expect, it } from 'vitest';
import { call, makeOrganization } from '../support/api.js';
import { makeConversation, patchMessage, postMessage } from '../support/conversations.js';
import { setPlan } from '../support/fixtures.js';
import { missingId } from '../support/ids.js';
import { getThread } from '../support/thread-reads.js';
import { makeTypedMarkup, reply } from '../support/threads.js';
import { pngBytes, uploadFile } from '../support/uploads.js';
import { storageBreakdownOf } from '../support/workspaces.js';

/** A confirmed `message_attachment` upload for a markup. */
async function uploadAttachment(
  key: string,
  markupId: string,
  bytes: Buffer,
  options: { confirm?: boolean; filename?: string; contentType?: string } = {},
) {
  return uploadFile(
    key,
    {
      resourceType: 'message_attachment',
      resourceId: markupId,
      filename: options.filename ?? 'notes.txt',
      contentType: options.contentType ?? 'text/plain',
      bytes,
    },
    { confirm: options.confirm },
  );
}

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
    expect(Object.keys(attachment).sort()).toEqual(
      ['createdAt', 'etag', 'filesize', 'id', 'messageId', 'mimeType', 'modifiedAt', 'originalFilename', 'url'].sort(),
    );
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
    const upload = await uploadAttachment(org.workspaceKey, markup.id, await pngBytes(), {
      filename: 'shot.png',
      contentType: 'image/png',
    });

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
    const twice = await postMessage(org.workspaceKey, thread.id, {
      content: 'listed twice',
      attachments: [{ fileId: fresh.fileId }, { fileId: fresh.fileId }],
    });

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
    const screenshot = await uploadFile(org.workspaceKey, {
      resourceType: 'thread_screenshot',
      resourceId: markup.id,
      filename: 'shot.png',
      contentType: 'image/png',
      bytes: await pngBytes(),
    });
    const markupAsset = await uploadFile(org.workspaceKey, { filename: 'page.png', contentType: 'image/png', bytes: await pngBytes() });

    const answers = await Promise.all(
      [forOtherMarkup, screenshot, markupAsset].map((upload) =>
        postMessage(org.workspaceKey, thread.id, { content: 'x', attachments: [{ fileId: upload.fileId }] }),
      ),
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
