import { beforeAll, describe, expect, it } from 'vitest';
import { getUsers } from '../../shared/db/users.js';
import { call, makeOrganization, type Org } from '../support/api.js';
import { UUID } from '../support/ids.js';
import { listThreads, markupOf, numbersOf, viewModeCounts } from '../support/thread-reads.js';
import { BROWSER_CONTEXT, DESKTOP, MOBILE, TABLET, createThread, delta, makeTypedMarkup, threadBody } from '../support/threads.js';

const ADMIN_THREAD_SCOPES = ['view-thread', 'create-message', 'resolve-thread', 'update-thread', 'upload-screenshot', 'delete-thread'];

/** The stable user record an API key acts as (named after the key). */
async function apiUserOf(userId: string) {
  const [user] = await getUsers([userId]);
  if (!user) throw new Error(`no user ${userId}`);
  return user;
}

describe('POST /threads (Resources: Thread; Endpoints: create thread body)', () => {
  let org: Org;
  let author: { id: string; createdAt: number; modifiedAt: number; name: string; guest: boolean };

  beforeAll(async () => {
    org = await makeOrganization();
    const user = await apiUserOf(org.workspaceKeyUserId);
    author = { id: user.id, createdAt: user.createdAt, modifiedAt: user.modifiedAt, name: user.name, guest: false };
  });

  /** The common public fields of a thread the workspace key just created with one message. */
  function expectCommonShape(thread: any, before: number, after: number, text = 'Please look at this') {
    expect(thread.id).toMatch(UUID);
    expect(thread.createdAt).toBeGreaterThanOrEqual(before);
    expect(thread.createdAt).toBeLessThanOrEqual(after);
    expect(thread).toMatchObject({
      modifiedAt: thread.createdAt,
      lastActivityAt: thread.createdAt,
      scopes: ADMIN_THREAD_SCOPES,
      assignedRoleSlugs: [],
      user: author,
      number: 1,
      resolved: false,
      userMetaData: { lastSeenAt: thread.createdAt },
      read: true,
      unreadMessageCount: 0,
    });
    expect(thread.messages).toEqual([
      {
        id: expect.stringMatching(UUID),
        createdAt: thread.createdAt,
        modifiedAt: thread.createdAt,
        scopes: ['view-message', 'update-message', 'delete-message'],
        assignedRoleSlugs: [],
        threadId: thread.id,
        message: text,
        messageJson: delta(text),
        user: author,
        userMetaData: { lastSeenAt: thread.createdAt },
        attachments: [],
        clipVideos: [],
        content: text,
        mentionIds: [],
        read: true,
      },
    ]);
  }

  /** GET /threads/:id answers exactly what the creation answered. */
  async function expectReadBack(thread: Record<string, unknown> & { id: string }) {
    const read = await call('GET', `/threads/${thread.id}`, { key: org.workspaceKey });
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual(thread);
  }

  it('creates a webpage thread with the webpage fields, its elements and parents, and reads it back the same', async () => {
    const markup = await makeTypedMarkup(org, 'webpage', { url: 'https://example.com/pricing' });
    const before = Date.now();

    const response = await call('POST', '/threads', {
      key: org.workspaceKey,
      body: threadBody(markup, {
        url: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
        elements: [
          { elementPath: 'html > body > main > h1', offsetXPercentage: 12.5, offsetYPercentage: 50 },
          { elementPath: 'html > body > main', offsetXPercentage: 0, offsetYPercentage: 100 },
        ],
        elementParents: [
          { url: 'https://example.com/pricing?plan=pro', canonicalUrl: 'https://example.com/pricing', path: 'html > body', depth: 1 },
        ],
        viewModeId: TABLET,
      }),
    });

    const after = Date.now();
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    const thread = response.body.data;
    expectCommonShape(thread, before, after);
    expect(thread).toMatchObject({
      projectId: markup.id,
      proxyUrl: 'https://example.com/pricing?plan=pro',
      originalUrl: 'https://example.com/pricing?plan=pro',
      canonicalUrl: 'https://example.com/pricing',
      browserContext: BROWSER_CONTEXT,
      viewModeId: TABLET,
      annotations: null,
      priority: null,
    });
    expect(thread.elements).toEqual([
      {
        id: expect.stringMatching(UUID),
        createdAt: thread.createdAt,
        modifiedAt: thread.createdAt,
        threadId: thread.id,
        path: 'html > body > main > h1',
        offsetXPercentage: 12.5,
        offsetYPercentage: 50,
      },
      {
        id: expect.stringMatching(UUID),
        createdAt: thread.createdAt,
        modifiedAt: thread.createdAt,
        threadId: thread.id,
        path: 'html > body > main',
        offsetXPercentage: 0,
        offsetYPercentage: 100,
      },
    ]);
    expect(thread.parents).toEqual([
      {
        id: expect.stringMatching(UUID),
        createdAt: thread.createdAt,
        modifiedAt: thread.createdAt,
        path: 'html > body',
        depth: 1,
        proxyUrl: 'https://example.com/pricing?plan=pro',
        originalUrl: 'https://example.com/pricing?plan=pro',
        canonicalUrl: 'https://example.com/pricing',
      },
    ]);
    await expectReadBack(thread);
  });

  it('creates an image thread on the first image by default, and on the image named by projectImageId', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const [first, second] = markup.images!;
    const before = Date.now();

    const onFirst = await call('POST', '/threads', {
      key: org.workspaceKey,
      body: threadBody(markup, { offsetXPercentage: 0, offsetYPercentage: 100 }),
    });
    const after = Date.now();
    const onSecond = await call('POST', '/threads', {
      key: org.workspaceKey,
      body: threadBody(markup, { projectImageId: second!.id, startTime: 1.5, endTime: 4 }),
    });

    expect(onFirst.status, JSON.stringify(onFirst.body)).toBe(200);
    expectCommonShape(onFirst.body.data, before, after);
    expect(onFirst.body.data).toMatchObject({
      projectId: markup.id,
      projectImageId: first!.id,
      offsetXPercentage: 0,
      offsetYPercentage: 100,
      startTime: 0,
      endTime: 0,
    });
    expect(onFirst.body.data).not.toHaveProperty('elements');
    expect(onSecond.status).toBe(200);
    expect(onSecond.body.data).toMatchObject({
      number: 2,
      projectImageId: second!.id,
      offsetXPercentage: 25,
      offsetYPercentage: 40,
      startTime: 1.5,
      endTime: 4,
    });
    await expectReadBack(onFirst.body.data);
    await expectReadBack(onSecond.body.data);
  });

  it('creates a PDF thread on its page with the text highlight', async () => {
    const markup = await makeTypedMarkup(org, 'pdf');
    const textHighlight = {
      startKey: 'p2-l1',
      endKey: 'p2-l2',
      startOffset: 3,
      startIndex: 0,
      endOffset: 8,
      endIndex: 1,
      text: 'Terms apply',
    };
    const before = Date.now();

    const response = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { pageNumber: 2, textHighlight }) });

    const after = Date.now();
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expectCommonShape(response.body.data, before, after);
    expect(response.body.data).toMatchObject({
      projectId: markup.id,
      projectImageId: null,
      offsetXPercentage: 25,
      offsetYPercentage: 40,
      pageNumber: 2,
      textHighlight,
    });
    await expectReadBack(response.body.data);
  });

  it('creates a video thread at its start and end time', async () => {
    const markup = await makeTypedMarkup(org, 'video');
    const before = Date.now();

    const response = await call('POST', '/threads', { key: org.workspaceKey, body: threadBody(markup, { startTime: 5, endTime: 9.5 }) });

    const after = Date.now();
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expectCommonShape(response.body.data, before, after);
    expect(response.body.data).toMatchObject({
      projectId: markup.id,
      offsetXPercentage: 25,
      offsetYPercentage: 40,
      startTime: 5,
      endTime: 9.5,
    });
    await expectReadBack(response.body.data);
  });

  it('keeps annotations and priority as sent', async () => {
    const markup = await makeTypedMarkup(org, 'image');
    const annotations = { version: '2.1', scale: 1.5, originalWidth: 800, originalHeight: 600 };

    const thread = await createThread(org.workspaceKey, markup, { annotations, priority: 7 });

    expect(thread).toMatchObject({ annotations, priority: 7 });
    await expectReadBack(thread);
  });
});

describe('thread numbers (1, 2, 3 per markup)', () => {
  it('numbers each markup on its own', async () => {
    const org = await makeOrganization();
    const [a, b] = await Promise.all([makeTypedMarkup(org, 'webpage'), makeTypedMarkup(org, 'pdf')]);

    const numbers: number[] = [];
    for (const markup of [a, a, b, a, b]) numbers.push((await createThread(org.workspaceKey, markup!)).number);

    expect(numbers).toEqual([1, 2, 1, 3, 2]);
  });

  it('gives 30 concurrent creations the numbers 1 to 30, each once, and counts all of them', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    const modes = [DESKTOP, TABLET, MOBILE];

    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call('POST', '/threads', {
          key: org.workspaceKey,
          body: threadBody(markup, { viewModeId: modes[i % 3], message: delta(`Note ${i}`) }),
        }),
      ),
    );

    for (const response of responses) expect(response.status, JSON.stringify(response.body)).toBe(200);
    const numbers = responses.map((response) => response.body.data.number as number).sort((x, y) => x - y);
    expect(numbers).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect((await markupOf(org.workspaceKey, markup.id)).activeThreads).toBe(30);
    expect(await viewModeCounts(org.workspaceKey, markup.id)).toEqual({ [DESKTOP]: 10, [TABLET]: 10, [MOBILE]: 10 });
    const listed = await listThreads(org.workspaceKey, { markupId: markup.id, limit: 100 });
    expect(listed.total).toBe(30);
    expect(numbersOf(listed.threads)).toEqual(numbers);
  });
});
