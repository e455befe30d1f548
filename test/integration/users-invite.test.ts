import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { LOCAL_EMAIL_SENDER } from '../../infra/local/stack.js';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { armFault } from '../../shared/db/core/faults.js';
import { ensureMemberCounts, MAX_MEMBERS, memberCountsKey } from '../../shared/db/members.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { makeOrganization } from '../support/api.js';
import { deliveredTo, freshEmail, invite, listUsers, makeMember, usersByEmail } from '../support/members.js';
import { expectProblem } from '../support/problems.js';

describe('POST /users/invite (issue 11 item 7; DESIGN "Invitations")', () => {
  it('lists each invitee at once as invited with the role, and sends each one invitation email from the configured sender through the SES emulator', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const [first, second] = [freshEmail('first'), freshEmail('second')];

    const response = await invite(owner.key, {
      emails: [first, second.toUpperCase()],
      role: 'viewer',
      message: 'Please review the landing page by Friday.',
    });
    const users = await usersByEmail(org.workspaceKey);
    const [delivered] = await deliveredTo(first);

    expect(response.status, JSON.stringify(response.body)).toBe(204);
    expect(users.get(first)).toEqual({
      id: expect.any(String),
      email: first,
      name: first.split('@')[0],
      role: 'viewer',
      status: 'invited',
    });
    expect(users.get(second)).toMatchObject({ email: second, role: 'viewer', status: 'invited' });
    expect(users.get(owner.email)).toMatchObject({ id: owner.userId, role: 'owner', status: 'active' });
    expect(await deliveredTo(second)).toHaveLength(1);
    expect(delivered).toMatchObject({ from: LOCAL_EMAIL_SENDER, replyTo: [owner.email], destination: { to: [first] } });
    expect(delivered!.subject).toContain('invited you to');
    expect(delivered!.body.text).toContain('Please review the landing page by Friday.');
    expect(delivered!.body.text).toContain('as viewer');
  });

  it('lets an admin invite, with the contributor role by default', async () => {
    const org = await makeOrganization();
    const admin = await makeMember(org.workspaceId, 'admin');
    const email = freshEmail();

    const response = await invite(admin.key, { emails: [email] });

    expect(response.status).toBe(204);
    expect((await usersByEmail(org.workspaceKey)).get(email)).toMatchObject({ role: 'contributor', status: 'invited' });
    expect(await deliveredTo(email)).toHaveLength(1);
  });

  it('changes nothing and sends no second email when an address is invited again, in any case, or is already a member', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const member = await makeMember(org.workspaceId, 'viewer');
    const email = freshEmail();
    await invite(owner.key, { emails: [email], role: 'viewer' });
    const before = await listUsers(owner.key);

    const again = await invite(owner.key, { emails: [email.toUpperCase(), email, member.email], role: 'admin' });
    const after = await listUsers(owner.key);

    expect(again.status).toBe(204);
    expect(after.body).toEqual(before.body);
    expect((await usersByEmail(owner.key)).get(member.email)).toMatchObject({ role: 'viewer', status: 'active' });
    expect(await deliveredTo(email)).toHaveLength(1);
    expect(await deliveredTo(member.email)).toHaveLength(0);
  });

  it('keeps the invitation when its email cannot be sent, and sends it when the address is invited again', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const [failing, fine] = [freshEmail('failing'), freshEmail('fine')];
    await armFault('before-invitation-email', failing);

    const first = await invite(owner.key, { emails: [failing, fine] });
    const unsent = await deliveredTo(failing);
    const retried = await invite(owner.key, { emails: [failing] });
    const third = await invite(owner.key, { emails: [failing] });

    expect(first.status).toBe(204);
    expect((await usersByEmail(owner.key)).get(failing)).toMatchObject({ status: 'invited' });
    expect(unsent).toHaveLength(0);
    expect(await deliveredTo(fine)).toHaveLength(1);
    expect([retried.status, third.status]).toEqual([204, 204]);
    expect(await deliveredTo(failing)).toHaveLength(1);
  });

  it('sends one email when the same new address is invited by parallel requests', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const email = freshEmail();

    const responses = await Promise.all(Array.from({ length: 5 }, () => invite(owner.key, { emails: [email] })));

    expect(responses.map((response) => response.status)).toEqual([204, 204, 204, 204, 204]);
    expect([...(await usersByEmail(owner.key)).values()].filter((user) => user.email === email)).toHaveLength(1);
    expect(await deliveredTo(email)).toHaveLength(1);
  });

  it('makes an invitee an active member, keeping the role, when a member key is made for the address', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const email = freshEmail();
    await invite(owner.key, { emails: [email], role: 'admin' });

    const issued = await createWorkspaceKey(org.workspaceId, { email });
    const joined = (await usersByEmail(owner.key)).get(email);
    const asInvitee = await invite(issued.apiKey, { emails: [freshEmail()] });

    expect(joined).toMatchObject({ id: issued.userId, role: 'admin', status: 'active' });
    expect(asInvitee.status).toBe(204);
  });

  it('refuses callers without a verified email or below admin with 403, and writes nothing', async () => {
    const org = await makeOrganization();
    const contributor = await makeMember(org.workspaceId, 'contributor');
    const viewer = await makeMember(org.workspaceId, 'viewer');
    const admin = await makeMember(org.workspaceId, 'admin');
    const before = await listUsers(org.workspaceKey);
    const email = freshEmail();

    const plainKey = await invite(org.workspaceKey, { emails: [email] });
    const orgKey = await invite(org.orgKey, { emails: [email] }, { workspaceId: org.workspaceId });
    const asContributor = await invite(contributor.key, { emails: [email] });
    const asViewer = await invite(viewer.key, { emails: [email] });
    const ownerByAdmin = await invite(admin.key, { emails: [email], role: 'owner' });

    expectProblem(plainKey, 403);
    expect(plainKey.body.type).toMatch(/verified-email-required$/);
    expectProblem(orgKey, 403);
    expect(orgKey.body.type).toMatch(/verified-email-required$/);
    expectProblem(asContributor, 403);
    expect(asContributor.body.type).toMatch(/insufficient-role$/);
    expectProblem(asViewer, 403);
    expectProblem(ownerByAdmin, 403);
    expect(ownerByAdmin.body.type).toMatch(/role-above-caller$/);
    expect((await listUsers(org.workspaceKey)).body).toEqual(before.body);
    expect(await deliveredTo(email)).toHaveLength(0);
  });

  it('answers 400 naming the field for bad addresses, more than 25 of them, none, a bad role or a long message', async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    const many = Array.from({ length: 26 }, (_, i) => `person${i}@example.com`);

    expectProblem(await invite(owner.key, { emails: [freshEmail(), 'not an address'] }), 400, '/body/emails/1');
    expectProblem(await invite(owner.key, { emails: ['a@b'] }), 400, '/body/emails/0');
    expectProblem(await invite(owner.key, { emails: many }), 400, '/body/emails');
    expectProblem(await invite(owner.key, { emails: [] }), 400, '/body/emails');
    expectProblem(await invite(owner.key, {}), 400, '/body/emails');
    expectProblem(await invite(owner.key, { emails: 'x@example.com' }), 400, '/body/emails');
    expectProblem(await invite(owner.key, { emails: [freshEmail()], role: 'superuser' }), 400, '/body/role');
    expectProblem(await invite(owner.key, { emails: [freshEmail()], message: 'x'.repeat(2001) }), 400, '/body/message');
    expect(await invite(owner.key, { emails: Array.from({ length: 25 }, () => freshEmail()) })).toMatchObject({ status: 204 });
  });

  it(`refuses invitations past ${MAX_MEMBERS} members and invitees with 409 member-limit`, async () => {
    const org = await makeOrganization();
    const owner = await makeMember(org.workspaceId, 'owner');
    await ensureMemberCounts(org.workspaceId);
    // Stands in for MAX_MEMBERS - 1 members: the counter is what the cap is enforced on.
    await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: memberCountsKey(org.workspaceId),
        UpdateExpression: 'SET memberCount = :n',
        ExpressionAttributeValues: { ':n': MAX_MEMBERS - 1 },
      }),
    );
    const [one, two] = [freshEmail(), freshEmail()];

    const tooMany = await invite(owner.key, { emails: [one, two] });
    const fits = await invite(owner.key, { emails: [one] });
    const full = await invite(owner.key, { emails: [two] });

    expectProblem(tooMany, 409);
    expect(tooMany.body.type).toMatch(/member-limit$/);
    expect(fits.status).toBe(204);
    expectProblem(full, 409);
    expect([...(await usersByEmail(owner.key)).keys()]).not.toContain(two);
  });
});
