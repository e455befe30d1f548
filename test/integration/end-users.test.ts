import { describe, expect, it } from 'vitest';
import type { EndUserRole } from '../../shared/auth/permissions.js';
import { call, makeOrganization, type ApiResponse, type Org } from '../support/api.js';
import { endUserToken, makeEndUser } from '../support/end-users.js';
import { setPlan } from '../support/fixtures.js';
import { expectProblem } from '../support/problems.js';
import { getThread } from '../support/thread-reads.js';
import { createThread, makeTypedMarkup, reply, threadBody } from '../support/threads.js';
import { completeUpload, pngBytes, postToStorage, readUploadRecord, requestPolicy, uploadFile } from '../support/uploads.js';

/**
 * Issue 11 item 4: what end users (exchange tokens) may do beyond the authorization matrix: their
 * own records against other people's, read state of their own, and a bound token's one markup.
 */

const pin = { viewportXPercentage: 10, viewportYPercentage: 20 };
const screenshotQuery = (bytes: Buffer, fileId?: string) => ({
  filename: 's.png',
  mimeType: 'image/png',
  filesize: String(bytes.length),
  fileId,
});

async function setUp() {
  const org = await makeOrganization('End users');
  const markup = await makeTypedMarkup(org, 'image');
  const as = (markupRole: EndUserRole, markupId?: string) => makeEndUser({ ...ref(org), markupRole, markupId });
  return { org, markup, as };
}
const ref = (org: Org) => ({ organizationId: org.organizationId, workspaceId: org.workspaceId });

describe('a contributor end user edits and deletes only its own (thread:update, thread:delete, message:update, message:delete)', () => {
  it('opens threads and replies as itself, and changes its own thread: resolve, unresolve, move the pin, attach a screenshot, delete', async () => {
    const { markup, as } = await setUp();
    const contributor = await as('project:contributor');

    const thread = await createThread(contributor.token, markup);
    const message = await reply(contributor.token, thread.id, { content: 'Mine too' });

    expect(thread.user.id).toBe(contributor.userId);
    expect(message.user.id).toBe(contributor.userId);
    expect(thread.scopes).toEqual(expect.arrayContaining(['resolve-thread', 'update-thread', 'upload-screenshot', 'delete-thread']));
    expect((await call('POST', `/threads/${thread.id}/resolve`, { key: contributor.token })).status).toBe(200);
    expect((await call('POST', `/threads/${thread.id}/unresolve`, { key: contributor.token })).status).toBe(200);
    expect((await call('PATCH', `/threads/${thread.id}/move-pin`, { key: contributor.token, body: pin })).status).toBe(200);
    const png = await pngBytes();
    const policy = await call('GET', `/threads/${thread.id}/screenshot-upload-policy`, {
      key: contributor.token,
      query: screenshotQuery(png),
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const posted = await postToStorage(policy.body.data.policy, png, { filename: 's.png' });
    const attached = await call('PUT', `/threads/${thread.id}/screenshot`, {
      key: contributor.token,
      body: {
        fileId: policy.body.data.metadata.fileId,
        key: policy.body.data.key,
        etag: posted.etag,
        mimeType: 'image/png',
        width: 4,
        height: 3,
        filesize: png.length,
      },
    });
    expect(attached.status, JSON.stringify(attached.body)).toBe(200);
    expect((await call('PATCH', `/messages/${message.id}`, { key: contributor.token, body: { content: 'Edited' } })).status).toBe(200);
    expect((await call('DELETE', `/messages/${message.id}`, { key: contributor.token })).status).toBe(204);
    expect((await call('DELETE', `/threads/${thread.id}`, { key: contributor.token })).status).toBe(204);
  });

  it("is refused every change to someone else's thread and message (403), which stay as they were", async () => {
    const { org, markup, as } = await setUp();
    const contributor = await as('project:contributor');
    const thread = await createThread(org.workspaceKey, markup);
    const png = await pngBytes();
    const refusedFileId = crypto.randomUUID();

    const seen = await getThread(contributor.token, thread.id);
    const answers = {
      resolve: await call('POST', `/threads/${thread.id}/resolve`, { key: contributor.token }),
      movePin: await call('PATCH', `/threads/${thread.id}/move-pin`, { key: contributor.token, body: pin }),
      policy: await call('GET', `/threads/${thread.id}/screenshot-upload-policy`, {
        key: contributor.token,
        query: screenshotQuery(png, refusedFileId),
      }),
      attach: await call('PUT', `/threads/${thread.id}/screenshot`, {
        key: contributor.token,
        body: { fileId: refusedFileId, key: 'k', etag: '"0"', mimeType: 'image/png', width: 4, height: 3, filesize: png.length },
      }),
      editMessage: await call('PATCH', `/messages/${thread.messages[0].id}`, { key: contributor.token, body: { content: 'Not mine' } }),
      deleteMessage: await call('DELETE', `/messages/${thread.messages[0].id}`, { key: contributor.token }),
      deleteThread: await call('DELETE', `/threads/${thread.id}`, { key: contributor.token }),
    };

    for (const [name, response] of Object.entries(answers)) expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(403);
    expect(answers.editMessage.body.type).toMatch(/not-message-author$/);
    expect(answers.resolve.body.type).toMatch(/insufficient-role$/);
    expect(seen.scopes).toEqual(['view-thread', 'create-message']);
    expect(seen.messages[0].scopes).toEqual(['view-message']);
    expect(await readUploadRecord(refusedFileId)).toBeUndefined();
    const after = await getThread(org.workspaceKey, thread.id);
    expect(after).toMatchObject({ resolved: false, offsetXPercentage: 25, offsetYPercentage: 40, modifiedAt: thread.modifiedAt });
    expect(after.messages.map((message: { message: string }) => message.message)).toEqual([thread.messages[0].message]);
    // Replying to someone else's thread is every contributor's right.
    expect((await call('POST', `/threads/${thread.id}/messages`, { key: contributor.token, body: { content: 'A reply' } })).status).toBe(
      200,
    );
  });

  it("lets an owner end user change and delete other people's threads and delete their messages, never edit them", async () => {
    const { org, markup, as } = await setUp();
    const owner = await as('project:owner');
    const thread = await createThread(org.workspaceKey, markup);
    const other = await reply(org.workspaceKey, thread.id, { content: 'By the key' });

    const seen = await getThread(owner.token, thread.id);
    expect(seen.scopes).toEqual(expect.arrayContaining(['resolve-thread', 'delete-thread']));
    expect(seen.messages[1].scopes).toEqual(['view-message', 'delete-message']);
    expect((await call('POST', `/threads/${thread.id}/resolve`, { key: owner.token })).status).toBe(200);
    expect((await call('PATCH', `/threads/${thread.id}/move-pin`, { key: owner.token, body: pin })).status).toBe(200);
    expectProblem(await call('PATCH', `/messages/${other.id}`, { key: owner.token, body: { content: 'Not mine' } }), 403);
    expect((await call('DELETE', `/messages/${other.id}`, { key: owner.token })).status).toBe(204);
    expect((await call('DELETE', `/threads/${thread.id}`, { key: owner.token })).status).toBe(204);
  });
});

describe('a viewer end user reads and marks read, and the read state is its own (Authentication 5)', () => {
  it('marks a thread and a message read for itself only; the API user and other end users keep theirs', async () => {
    const { org, markup, as } = await setUp();
    const [viewer, otherViewer] = [await as('project:viewer'), await as('project:viewer')];
    const contributor = await as('project:contributor');
    const thread = await createThread(contributor.token, markup);
    const message = await reply(contributor.token, thread.id, { content: 'Second' });

    expect((await getThread(viewer.token, thread.id)).read).toBe(false);
    expect((await call('POST', `/threads/${thread.id}/read`, { key: viewer.token })).status).toBe(204);
    expect((await call('POST', `/messages/${message.id}/read`, { key: otherViewer.token })).status).toBe(204);

    const forViewer = await getThread(viewer.token, thread.id);
    const forOther = await getThread(otherViewer.token, thread.id);
    const forKey = await getThread(org.workspaceKey, thread.id);
    expect(forViewer).toMatchObject({ read: true, unreadMessageCount: 0 });
    expect(forOther).toMatchObject({ read: false, unreadMessageCount: 1 });
    expect(forOther.messages.map((each: { read: boolean }) => each.read)).toEqual([false, true]);
    expect(forKey).toMatchObject({ read: false, unreadMessageCount: 2 });
    expect((await getThread(contributor.token, thread.id)).read).toBe(true);
  });

  it('reads the markup and its threads with view scopes only, and is refused writing (403, nothing written)', async () => {
    const { org, markup, as } = await setUp();
    const viewer = await as('project:viewer');
    const thread = await createThread(org.workspaceKey, markup);

    const read = await call('GET', `/markups/${markup.id}`, { key: viewer.token });
    const listed = await call('GET', '/threads', { key: viewer.token, query: { markupId: markup.id } });
    expect(read.status).toBe(200);
    expect(read.body.data.scopes).toEqual(['view-project']);
    expect(listed.body.data.threads.map((each: { id: string }) => each.id)).toEqual([thread.id]);
    expect(listed.body.data.threads[0].scopes).toEqual(['view-thread']);
    expectProblem(await call('POST', '/threads', { key: viewer.token, body: threadBody(markup) }), 403);
    expectProblem(await call('POST', `/threads/${thread.id}/messages`, { key: viewer.token, body: { content: 'No' } }), 403);
    expectProblem(await call('POST', `/threads/${thread.id}/resolve`, { key: viewer.token }), 403);
    expect((await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data.total).toBe(1);
  });
});

describe("the markup's scopes follow the end user's role (read from the permission table)", () => {
  it.each([
    ['project:viewer', ['view-project'], ['update-project', 'create-thread']],
    ['project:contributor', ['view-project', 'create-thread'], ['update-project']],
    ['project:owner', ['view-project', 'update-project', 'create-thread'], []],
  ] as [EndUserRole, string[], string[]][])('%s', async (role, present, absent) => {
    const { markup, as } = await setUp();
    const scopes: string[] = (await call('GET', `/markups/${markup.id}`, { key: (await as(role)).token })).body.data.scopes;

    expect(scopes).toEqual(expect.arrayContaining(present));
    for (const scope of absent) expect(scopes).not.toContain(scope);
  });
});

describe('uploads for comments (Uploads: access checked per resource)', () => {
  it('lets a contributor end user upload an attachment for its markup and attach it to its reply', async () => {
    const { org, markup, as } = await setUp();
    const contributor = await as('project:contributor');
    const thread = await createThread(org.workspaceKey, markup);

    const file = await uploadFile(contributor.token, {
      bytes: await pngBytes(),
      filename: 'a.png',
      contentType: 'image/png',
      resourceType: 'message_attachment',
      resourceId: markup.id,
    });
    const message = await reply(contributor.token, thread.id, { content: 'See attached', attachments: [{ fileId: file.fileId }] });

    expect(message.user.id).toBe(contributor.userId);
    expect(message.attachments.map((attachment: { id: string }) => attachment.id)).toEqual([file.fileId]);
  });

  it('refuses end users every upload that is not for a markup (403, no upload recorded)', async () => {
    const { org, as } = await setUp();
    const owner = await as('project:owner');
    const png = await pngBytes();
    const root = (await call('GET', '/workspace', { key: org.workspaceKey })).body.data.rootFolderId as string;
    const policies = [
      { resourceType: 'markup_asset', resourceId: root },
      { resourceType: 'project_image', resourceId: root },
      { resourceType: 'user_avatar', resourceId: owner.userId },
      { resourceType: 'external_user_avatar', resourceId: owner.externalId },
      { resourceType: 'workspace_icon', resourceId: org.workspaceId },
    ].map((target) => ({ ...target, fileId: crypto.randomUUID(), filename: 'a.png', contentType: 'image/png', filesize: png.length }));

    for (const body of policies) {
      const response = await requestPolicy(owner.token, body);
      expect(response.status, `${body.resourceType}: ${JSON.stringify(response.body)}`).toBe(403);
      expect(await readUploadRecord(body.fileId)).toBeUndefined();
    }
  });
});

describe('a token bound to one markup (Authentication, customer JWT exchange rule 3)', () => {
  it('is refused every feedback, markup and upload operation on any other markup (403 markup-out-of-scope), nothing written', async () => {
    const { org, markup: bound, as } = await setUp();
    const other = await makeTypedMarkup(org, 'image');
    const owner = await as('project:owner', bound.id);
    const thread = await createThread(org.workspaceKey, other);
    const message = thread.messages[0].id as string;
    const png = await pngBytes();
    const issued = await uploadFile(
      org.workspaceKey,
      { bytes: png, filename: 'a.png', contentType: 'image/png', resourceType: 'message_attachment', resourceId: other.id },
      { confirm: false },
    );
    const refusedFileIds = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const policy = (resourceType: string, fileId: string) => ({
      resourceType,
      resourceId: other.id,
      fileId,
      filename: 'a.png',
      contentType: 'image/png',
      filesize: png.length,
    });
    const before = {
      markup: await call('GET', `/markups/${other.id}`, { key: org.workspaceKey }),
      thread: await getThread(org.workspaceKey, thread.id),
    };

    const key = owner.token;
    const answers: Record<string, ApiResponse> = {
      'GET markup': await call('GET', `/markups/${other.id}`, { key }),
      'rename markup': await call('POST', `/markups/${other.id}`, { key, body: { name: 'Renamed' } }),
      'pause comments': await call('PATCH', `/markups/${other.id}/read-only`, { key, body: { readOnly: true } }),
      'GET view-modes': await call('GET', `/markups/${other.id}/view-modes`, { key }),
      'list threads': await call('GET', '/threads', { key, query: { markupId: other.id } }),
      'create thread': await call('POST', '/threads', { key, body: threadBody(other) }),
      'GET thread': await call('GET', `/threads/${thread.id}`, { key }),
      resolve: await call('POST', `/threads/${thread.id}/resolve`, { key }),
      unresolve: await call('POST', `/threads/${thread.id}/unresolve`, { key }),
      'read thread': await call('POST', `/threads/${thread.id}/read`, { key }),
      'move pin': await call('PATCH', `/threads/${thread.id}/move-pin`, { key, body: pin }),
      'screenshot policy': await call('GET', `/threads/${thread.id}/screenshot-upload-policy`, {
        key,
        query: screenshotQuery(png, refusedFileIds[0]),
      }),
      'attach screenshot': await call('PUT', `/threads/${thread.id}/screenshot`, {
        key,
        body: {
          fileId: issued.fileId,
          key: issued.policy.key,
          etag: issued.etag,
          mimeType: 'image/png',
          width: 4,
          height: 3,
          filesize: png.length,
        },
      }),
      'GET screenshot': await call('GET', `/threads/${thread.id}/screenshot`, { key }),
      reply: await call('POST', `/threads/${thread.id}/messages`, { key, body: { content: 'No' } }),
      'edit message': await call('PATCH', `/messages/${message}`, { key, body: { content: 'No' } }),
      'read message': await call('POST', `/messages/${message}/read`, { key }),
      'delete message': await call('DELETE', `/messages/${message}`, { key }),
      'attachment policy': await requestPolicy(key, policy('message_attachment', refusedFileIds[1]!)),
      'screenshot upload policy': await requestPolicy(key, policy('thread_screenshot', refusedFileIds[2]!), '/upload-policy'),
      'complete upload': await completeUpload(key, issued.fileId, issued.etag),
      'complete upload (short path)': await completeUpload(key, issued.fileId, issued.etag, '/upload-complete'),
      'delete thread': await call('DELETE', `/threads/${thread.id}`, { key }),
    };

    for (const [name, response] of Object.entries(answers)) {
      expect(response.status, `${name}: ${JSON.stringify(response.body)}`).toBe(403);
      expect(response.body.type, name).toMatch(/markup-out-of-scope$/);
    }
    for (const fileId of refusedFileIds) expect(await readUploadRecord(fileId)).toBeUndefined();
    expect((await readUploadRecord(issued.fileId))?.state).toBe('issued');
    const markupFields = (response: ApiResponse) => {
      const { name, readOnly, activeThreads, modifiedAt } = response.body.data;
      return { name, readOnly, activeThreads, modifiedAt };
    };
    expect(markupFields(await call('GET', `/markups/${other.id}`, { key: org.workspaceKey }))).toEqual(markupFields(before.markup));
    expect(await getThread(org.workspaceKey, thread.id)).toEqual(before.thread);
  });

  it('works on its own markup', async () => {
    const { org, markup, as } = await setUp();
    await setPlan(org.organizationId, { pauseCommentsEnabled: true });
    const owner = await as('project:owner', markup.id);

    expect((await call('GET', `/markups/${markup.id}`, { key: owner.token })).status).toBe(200);
    const thread = await createThread(owner.token, markup);
    expect((await call('POST', `/markups/${markup.id}`, { key: owner.token, body: { name: 'Renamed by its owner' } })).status).toBe(200);
    expect((await call('GET', '/threads', { key: owner.token, query: { markupId: markup.id } })).body.data.total).toBe(1);
    expect((await call('DELETE', `/threads/${thread.id}`, { key: owner.token })).status).toBe(204);
    const paused = await call('PATCH', `/markups/${markup.id}/read-only`, { key: owner.token, body: { readOnly: true } });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.data.scopes).toContain('update-project-read-only');
  });
});

describe('an exchange token that is not valid (DESIGN: every failure is the same 401)', () => {
  it('answers 401 to an expired or altered token on a feedback route, and writes nothing', async () => {
    const { org, markup } = await setUp();
    const expired = await makeEndUser({ ...ref(org), markupRole: 'project:owner' }, Date.now() - 10 * 60_000);
    const valid = await makeEndUser({ ...ref(org), markupRole: 'project:owner' });
    const [header, payload, signature] = valid.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const altered = {
      payload: `${header}.${Buffer.from(JSON.stringify({ ...claims, role: 'project:owner', ws: crypto.randomUUID() })).toString('base64url')}.${signature}`,
      signature: `${header}.${payload}.${signature.slice(0, -4)}${signature.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`,
      none: `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`,
    };

    for (const [name, token] of Object.entries({ expired: expired.token, ...altered })) {
      const created = await call('POST', '/threads', { key: token, body: threadBody(markup) });
      const listed = await call('GET', '/threads', { key: token, query: { markupId: markup.id } });
      expect(created.status, `${name}: ${JSON.stringify(created.body)}`).toBe(401);
      expectProblem(listed, 401);
      expect(listed.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect((await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data.total).toBe(0);
    expect((await call('GET', '/threads', { key: valid.token, query: { markupId: markup.id } })).status).toBe(200);
  });
});

describe('the tag list is a member directory: closed to end users like GET /users', () => {
  it('answers 403 to an end user of any role, and still lists members (names, emails, roles) to API keys', async () => {
    const org = await makeOrganization();
    const markup = await makeTypedMarkup(org, 'webpage');
    for (const markupRole of ['project:viewer', 'project:contributor', 'project:owner'] as const) {
      const token = await endUserToken({
        organizationId: org.organizationId,
        workspaceId: org.workspaceId,
        markupRole,
        markupId: markup.id,
      });
      const response = await call('GET', `/markups/${markup.id}/tag`, { key: token });
      expectProblem(response, 403);
      expect(JSON.stringify(response.body)).not.toContain('@');
    }
    expect((await call('GET', `/markups/${markup.id}/tag`, { key: org.workspaceKey })).status).toBe(200);
  });
});
