import { describe, expect, it } from 'vitest';
import { makeConversation, patchMessage, postMessage } from '../support/conversations.js';
import { getThread } from '../support/thread-reads.js';
import { reply } from '../support/threads.js';

const CLIP = { title: 'Walkthrough', sharedUrl: 'https://clips.example.com/share/abc123', width: 1280, height: 720 };

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
