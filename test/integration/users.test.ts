import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { memberCountsKey } from '../../shared/db/members.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization } from '../support/api.js';
import { changeRole, freshEmail, invite, listUsers, makeMember, removeUser, usersByEmail } from '../support/members.js';
import { expectProblem } from '../support/problems.js';

const missingUser = '00000000-0000-4000-8000-00000000beef';

async function ownerCount(workspaceId: string): Promise<number> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: memberCountsKey(workspaceId), ConsistentRead: true }),
  );
  return result.Item?.ownerCount as number;
}

describe('GET /users (issue 11 item 7; DESIGN "API users and members")', () => {
  it('lists members with id, email, name, role and status, and no plain API user or organization key', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner', 'zoe');
    const viewer = await makeMember(org.workspaceId, 'viewer', 'adam');

    const asViewer = await listUsers(viewer.key);
    const asOrgKey = await listUsers(org.orgKey, { workspaceId: org.workspaceId });

    expect(asViewer.status).toBe(200);
    expect(asViewer.body.data).toEqual([
      { id: viewer.userId, email: viewer.email, name: viewer.email.split('@')[0], role: 'viewer', status: 'active' },
      { id: owner.userId, email: owner.email, name: owner.email.split('@')[0], role: 'owner', status: 'active' },
    ]);
    expect(asViewer.body.data.map((user: { id: string }) => user.id)).not.toContain(org.workspaceKeyUserId);
    expect(asOrgKey.body).toEqual(asViewer.body);
  });

  it('answers an empty list for a workspace without members, 400 for an organization key naming none, 403 for another workspace', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();

    expect(await listUsers(org.workspaceKey)).toMatchObject({ status: 200, body: { data: [] } });
    expectProblem(await listUsers(org.orgKey), 400);
    expectProblem(await listUsers(other.workspaceKey, { workspaceId: org.workspaceId }), 403);
    expectProblem(await listUsers(other.orgKey, { workspaceId: org.workspaceId }), 403);
  });
});

describe('PATCH /users/{userId}/role', () => {
  it('lets owners and admins change roles, and plain keys act as owners', async () => {
    const org = await makeOrganization();
    await makeMember(org.workspaceId, 'owner');
    const admin = await makeMember(org.workspaceId, 'admin');
    const member = await makeMember(org.workspaceId, 'viewer');

    const byAdmin = await changeRole(admin.key, member.userId, 'admin');
    const byPlainKey = await changeRole(org.workspaceKey, member.userId, 'owner');
    const byOrgKey = await changeRole(org.orgKey, member.userId, 'contributor', { workspaceId: org.workspaceId });
    const same = await changeRole(admin.key, member.userId, 'contributor');

    expect([byAdmin.status, byPlainKey.status, byOrgKey.status, same.status]).toEqual([204, 204, 204, 204]);
    expect((await usersByEmail(admin.key)).get(member.email)).toMatchObject({ role: 'contributor' });
  });

  it("changes an invitee's role, which stays invited", async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const email = freshEmail();
    await invite(owner.key, { emails: [email] });
    const invitee = (await usersByEmail(owner.key)).get(email)!;

    expect((await changeRole(owner.key, invitee.id, 'viewer')).status).toBe(204);
    expect((await usersByEmail(owner.key)).get(email)).toMatchObject({ role: 'viewer', status: 'invited' });
  });

  it("keeps owner in owners' hands: an admin can neither grant it nor take it away (403)", async () => {
    const org = await makeOrganization();
    const [owner, , admin, other] = [
      await makeMember(org.workspaceId, 'owner'),
      await makeMember(org.workspaceId, 'owner'),
      await makeMember(org.workspaceId, 'admin'),
      await makeMember(org.workspaceId, 'contributor'),
    ];

    const grant = await changeRole(admin.key, other.userId, 'owner');
    const takeAway = await changeRole(admin.key, owner.userId, 'viewer');

    expectProblem(grant, 403);
    expect(grant.body.type).toMatch(/role-above-caller$/);
    expectProblem(takeAway, 403);
    expect(takeAway.body.type).toMatch(/owner-required$/);
    expect((await changeRole(owner.key, other.userId, 'owner')).status).toBe(204);
  });

  it('refuses contributors and viewers (403), bad roles (400), bad ids (400) and users who are not members (404)', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const contributor = await makeMember(org.workspaceId, 'contributor');
    const viewer = await makeMember(org.workspaceId, 'viewer');
    const stranger = await makeMember(other.workspaceId, 'viewer');

    expectProblem(await changeRole(contributor.key, viewer.userId, 'contributor'), 403);
    expectProblem(await changeRole(viewer.key, viewer.userId, 'owner'), 403);
    expectProblem(await changeRole(org.workspaceKey, viewer.userId, 'superuser'), 400, '/body/role');
    expectProblem(await changeRole(org.workspaceKey, viewer.userId, undefined), 400, '/body/role');
    expectProblem(await changeRole(org.workspaceKey, 'not-a-uuid', 'viewer'), 400, '/params/userId');
    expectProblem(await changeRole(org.workspaceKey, missingUser, 'viewer'), 404);
    expectProblem(await changeRole(org.workspaceKey, stranger.userId, 'viewer'), 404);
    expect((await usersByEmail(org.workspaceKey)).get(viewer.email)).toMatchObject({ role: 'viewer' });
  });

  it('never demotes or removes the last owner (409 last-owner), whoever asks', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');

    const demoteSelf = await changeRole(owner.key, owner.userId, 'admin');
    const byPlainKey = await changeRole(org.workspaceKey, owner.userId, 'viewer');
    const removeSelf = await removeUser(owner.key, owner.userId);
    const second = await makeMember(org.workspaceId, 'owner');
    const demoteFirst = await changeRole(second.key, owner.userId, 'admin');
    const demoteSecond = await changeRole(second.key, second.userId, 'admin');

    for (const refused of [demoteSelf, byPlainKey, removeSelf, demoteSecond]) {
      expectProblem(refused, 409);
      expect(refused.body.type).toMatch(/last-owner$/);
    }
    expect(demoteFirst.status).toBe(204);
    expect((await usersByEmail(org.workspaceKey)).get(second.email)).toMatchObject({ role: 'owner' });
    expect(await ownerCount(org.workspaceId)).toBe(1);
  });

  it('leaves one owner when two owners demote each other at once (20 races)', { timeout: 120_000 }, async () => {
    for (let round = 0; round < 20; round++) {
      const org = await makeOrganization();
      const [a, b] = await Promise.all([makeMember(org.workspaceId, 'owner', 'a'), makeMember(org.workspaceId, 'owner', 'b')]);

      const responses = await Promise.all([changeRole(a.key, b.userId, 'admin'), changeRole(b.key, a.userId, 'admin')]);
      const owners = [...(await usersByEmail(org.workspaceKey)).values()].filter((user) => user.role === 'owner');

      const statuses = responses.map((response) => response.status).sort();
      expect(statuses[0], `round ${round}: ${JSON.stringify(responses.map((r) => r.body))}`).toBe(204);
      // The loser is refused: as an owner no longer last (409), or as the admin it just became (403).
      expect([403, 409], `round ${round}`).toContain(statuses[1]);
      expect(owners, `round ${round}`).toHaveLength(1);
      expect(await ownerCount(org.workspaceId), `round ${round}`).toBe(1);
    }
  });
});

describe('DELETE /users/{userId}', () => {
  it('removes a member, whose key dies with the membership (401), and withdraws an invitation', async () => {
    const org = await makeOrganization();
    const admin = await makeMember(org.workspaceId, 'admin');
    const member = await makeMember(org.workspaceId, 'contributor');
    const email = freshEmail();
    await invite(admin.key, { emails: [email] });
    const invitee = (await usersByEmail(admin.key)).get(email)!;

    const removed = await removeUser(admin.key, member.userId);
    const withdrawn = await removeUser(org.orgKey, invitee.id, { workspaceId: org.workspaceId });
    const asRemoved = await listUsers(member.key);
    const markups = await call('GET', '/markups', { key: member.key });
    const again = await removeUser(admin.key, member.userId);
    const listed = await usersByEmail(admin.key);

    expect([removed.status, withdrawn.status]).toEqual([204, 204]);
    expectProblem(asRemoved, 401);
    expectProblem(markups, 401);
    expectProblem(again, 404);
    expect([...listed.keys()]).toEqual([admin.email]);
  });

  it('keeps a removed member invited again out with their old key (401), which their joining does not revive', async () => {
    const org = await makeOrganization();
    const admin = await makeMember(org.workspaceId, 'admin');
    const member = await makeMember(org.workspaceId, 'admin', 'returning');
    expect((await removeUser(admin.key, member.userId)).status).toBe(204);
    expect((await invite(admin.key, { emails: [member.email], role: 'admin' })).status).toBe(204);
    expect((await usersByEmail(admin.key)).get(member.email)).toMatchObject({ status: 'invited' });

    const listing = await listUsers(member.key);
    const inviting = await invite(member.key, { emails: [freshEmail()] });
    const rejoined = await createWorkspaceKey(org.workspaceId, { email: member.email });
    expectProblem(listing, 401);
    expectProblem(inviting, 401);
    expect(rejoined.userId).toBe(member.userId);
    expect((await listUsers(rejoined.apiKey)).status).toBe(200);
    expectProblem(await listUsers(member.key), 401);
  });

  it('lets only owners remove owners, and refuses contributors and viewers (403)', async () => {
    const org = await makeOrganization();
    const [owner, secondOwner, admin, contributor] = [
      await makeMember(org.workspaceId, 'owner'),
      await makeMember(org.workspaceId, 'owner'),
      await makeMember(org.workspaceId, 'admin'),
      await makeMember(org.workspaceId, 'contributor'),
    ];

    const byAdmin = await removeUser(admin.key, owner.userId);
    const byContributor = await removeUser(contributor.key, admin.userId);

    expectProblem(byAdmin, 403);
    expect(byAdmin.body.type).toMatch(/owner-required$/);
    expectProblem(byContributor, 403);
    expect((await removeUser(secondOwner.key, owner.userId)).status).toBe(204);
    expect(await ownerCount(org.workspaceId)).toBe(1);
  });
});
