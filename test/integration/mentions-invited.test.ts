import { describe, expect, it } from 'vitest';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call } from '../support/api.js';
import { addMember, makeConversation, patchMessage, postMessage } from '../support/conversations.js';
import { freshEmail, invite, makeMember } from '../support/members.js';
import { expectProblem } from '../support/problems.js';
import { getThread } from '../support/thread-reads.js';
import { threadBody } from '../support/threads.js';

/**
 * People merely invited (GET /users status `invited`) have not joined the workspace: like strangers,
 * they cannot be mentioned (mentionIds, a Delta's mention, on a new thread, a reply or an edit) and
 * are not taggable. Once a key is made for them (they joined), they are both.
 */

const mentioning = (id: string) => ({ ops: [{ insert: 'cc ' }, { insert: { mention: { id, name: 'Invitee' } } }, { insert: '\n' }] });

async function setUp() {
  const conversation = await makeConversation();
  const { org } = conversation;
  const owner = await makeMember(org.workspaceId, 'owner');
  const email = freshEmail();
  expect((await invite(owner.key, { emails: [email], role: 'contributor' })).status).toBe(204);
  const listed = (await call('GET', '/users', { key: owner.key })).body.data as { id: string; email: string; status: string }[];
  const invitee = listed.find((user) => user.email === email)!;
  expect(invitee.status).toBe('invited');
  return { ...conversation, owner, invitee: { userId: invitee.id, email } };
}

const tagsOf = async (key: string, markupId: string) => (await call('GET', `/markups/${markupId}/tag`, { key })).body.data;

describe('invited people are not members yet: refused as mentions like strangers', () => {
  it('answers 400 naming the invitee for mentionIds and for a Delta mention on a reply, writes no message and tags nobody', async () => {
    const { org, markup, thread, invitee } = await setUp();
    const member = await addMember(org.workspaceId);

    const byIds = await postMessage(org.workspaceKey, thread.id, { content: 'Hi', mentionIds: [member.userId, invitee.userId] });
    const byDelta = await postMessage(org.workspaceKey, thread.id, { message: mentioning(invitee.userId) });

    expectProblem(byIds, 400, '/body/mentionIds');
    expect(byIds.body.errors[0].detail).toContain(invitee.userId);
    expect(byIds.body.errors[0].detail).not.toContain(member.userId);
    expectProblem(byDelta, 400, '/body/message');
    expect(byDelta.body.errors[0].detail).toContain(invitee.userId);
    expect((await getThread(org.workspaceKey, thread.id)).messages).toHaveLength(1);
    expect((await tagsOf(org.workspaceKey, markup.id)).tagged).toEqual([]);
  });

  it('answers 400 for an invitee mentioned by a new thread or added by an edit, and leaves the message as it was', async () => {
    const { org, markup, thread, invitee } = await setUp();
    const threadsBefore = (await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data.total;

    const newThread = await call('POST', '/threads', {
      key: org.workspaceKey,
      body: threadBody(markup, { message: mentioning(invitee.userId) }),
    });
    const edited = await patchMessage(org.workspaceKey, thread.messages[0].id, { content: 'Edited', mentionIds: [invitee.userId] });

    expectProblem(newThread, 400, '/body/message');
    expectProblem(edited, 400, '/body/mentionIds');
    expect((await call('GET', '/threads', { key: org.workspaceKey, query: { markupId: markup.id } })).body.data.total).toBe(threadsBefore);
    expect((await getThread(org.workspaceKey, thread.id)).messages[0]).toMatchObject({
      content: thread.messages[0].content,
      mentionIds: [],
    });
    expect((await tagsOf(org.workspaceKey, markup.id)).tagged).toEqual([]);
  });
});

describe('GET /markups/:id/tag: taggable lists active members only', () => {
  it('leaves the invitee out until a key is made for them, then lists them and accepts their mention', async () => {
    const { org, markup, thread, owner, invitee } = await setUp();

    const whileInvited = await tagsOf(org.workspaceKey, markup.id);
    await createWorkspaceKey(org.workspaceId, { email: invitee.email, role: 'contributor' });
    const joined = await tagsOf(org.workspaceKey, markup.id);
    const mentioned = await postMessage(org.workspaceKey, thread.id, { content: 'Welcome', mentionIds: [invitee.userId] });

    expect(whileInvited.taggable.map((user: { id: string }) => user.id)).toEqual([owner.userId]);
    expect(joined.taggable.map((user: { id: string }) => user.id).sort()).toEqual([owner.userId, invitee.userId].sort());
    expect(mentioned.status, JSON.stringify(mentioned.body)).toBe(200);
    expect(mentioned.body.data.mentionIds).toEqual([invitee.userId]);
    expect((await tagsOf(org.workspaceKey, markup.id)).tagged.map((user: { id: string }) => user.id)).toEqual([invitee.userId]);
  });
});
