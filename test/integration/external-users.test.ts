import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { ExternalUserSchema } from '../../functions/users/external-schemas.js';
import { getUser } from '../../shared/db/users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { makeOrganization } from '../support/api.js';
import {
  createExternalUser,
  deleteExternalUser,
  expectNoContent,
  getExternalUser,
  makeExternalUser,
  newExternalId,
  patchExternalUser,
  readExternalUserBack,
  uploadAvatar,
} from '../support/external-users.js';
import { UUID } from '../support/ids.js';
import { makeMemberKey } from '../support/items.js';
import { expectProblem } from '../support/problems.js';
import { pngBytes, readUploadRecord, uploadFile } from '../support/uploads.js';
import { makeSecondWorkspace } from '../support/workspaces.js';

describe('POST /users/external (Workspace users; Resources: Users, external user fields)', () => {
  it('creates an external user with every field, answers 204 with no body, and GET answers its shape', async () => {
    const org = await makeOrganization();
    const externalId = newExternalId();
    const before = Date.now();

    const created = await createExternalUser(org.workspaceKey, {
      externalId,
      name: '  Grace Hopper ',
      email: 'grace@example.com',
      avatarUrl: 'https://cdn.example.com/grace.png',
    });
    const read = await getExternalUser(org.workspaceKey, externalId);

    // DESIGN "Operations listed as 204 but described as returning data": only GET answers the record.
    expectNoContent(created);
    expect(read.status).toBe(200);
    expect(read.body.data).toEqual({
      id: expect.stringMatching(UUID),
      externalId,
      name: 'Grace Hopper',
      email: 'grace@example.com',
      avatarUrl: 'https://cdn.example.com/grace.png',
      avatarFileId: null,
      createdAt: expect.any(Number),
      modifiedAt: expect.any(Number),
    });
    expect(read.body.data.createdAt).toBeGreaterThanOrEqual(before);
    expect(read.body.data.modifiedAt).toBe(read.body.data.createdAt);
    // { data: externalUser }, as documented.
    expect(Object.keys(read.body)).toEqual(['data']);
    expect(v.safeParse(ExternalUserSchema, read.body.data).issues).toBeUndefined();
    expect(await getUser(read.body.data.id)).toMatchObject({ kind: 'external', name: 'Grace Hopper', email: null });
  });

  it('creates one with only its externalId, named after it, and keeps an id with slashes and unicode addressable', async () => {
    const org = await makeOrganization();
    const externalId = `tenant/7 é✓ ${newExternalId()}`;

    expectNoContent(await createExternalUser(org.workspaceKey, { externalId }));
    const read = await readExternalUserBack(org.workspaceKey, externalId);

    expect(read).toMatchObject({ externalId, name: null, email: null, avatarUrl: null, avatarFileId: null });
    expect((await getUser(read.id))?.name).toBe(externalId);
  });

  it('answers 409 when the workspace has the externalId already, and changes nothing', async () => {
    const org = await makeOrganization();
    const first = await makeExternalUser(org.workspaceKey, { name: 'First' });

    const again = await createExternalUser(org.workspaceKey, { externalId: first.externalId, name: 'Second' });

    expectProblem(again, 409);
    expect((await getExternalUser(org.workspaceKey, first.externalId)).body.data).toEqual(first);
  });

  it('keeps external users per workspace: the same externalId in another workspace is another user', async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const externalId = newExternalId();

    const inFirst = await createExternalUser(org.orgKey, { externalId, workspaceId: org.workspaceId });
    const inSecond = await createExternalUser(org.orgKey, { externalId }, { workspaceId: second.id });
    const firstRead = await readExternalUserBack(org.orgKey, externalId, { workspaceId: org.workspaceId });
    const secondRead = await readExternalUserBack(org.orgKey, externalId, { workspaceId: second.id });
    const fromSecondKey = await getExternalUser((await createWorkspaceKey(second.id)).apiKey, externalId);

    expect([inFirst.status, inSecond.status]).toEqual([204, 204]);
    expect(secondRead.id).not.toBe(firstRead.id);
    expect(fromSecondKey.body.data.id).toBe(secondRead.id);
  });

  it.each([
    ['no externalId', { externalId: undefined }, '/body/externalId'],
    ['an empty externalId', { externalId: '' }, '/body/externalId'],
    ['an externalId of 256 characters', { externalId: 'x'.repeat(256) }, '/body/externalId'],
    ['an externalId with a control character', { externalId: 'a\u0001b' }, '/body/externalId'],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, '/body/name'],
    ['an email that is no address', { email: 'grace at example' }, '/body/email'],
    ['an email of 255 characters', { email: `${'g'.repeat(243)}@example.com` }, '/body/email'],
    ['an http avatarUrl', { avatarUrl: 'http://cdn.example.com/a.png' }, '/body/avatarUrl'],
    ['a javascript: avatarUrl', { avatarUrl: 'javascript:alert(1)' }, '/body/avatarUrl'],
    ['an avatarUrl of 2,049 characters', { avatarUrl: `https://cdn.example.com/${'a'.repeat(2025)}` }, '/body/avatarUrl'],
    ['an avatarFileId that is no UUID', { avatarFileId: 'avatar.png' }, '/body/avatarFileId'],
  ])('answers 400 naming the field for %s', async (_label, body, pointer) => {
    const org = await makeOrganization();

    expectProblem(await createExternalUser(org.workspaceKey, { externalId: newExternalId(), ...body }), 400, pointer);
  });

  it('needs workspaceId from an organization key (400) and refuses another workspace to a workspace key (403)', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();

    expectProblem(await createExternalUser(org.orgKey, { externalId: newExternalId() }), 400);
    expectProblem(await createExternalUser(org.workspaceKey, { externalId: newExternalId(), workspaceId: other.workspaceId }), 403);
    expectProblem(await createExternalUser(other.orgKey, { externalId: newExternalId(), workspaceId: org.workspaceId }), 403);
    expectNoContent(await createExternalUser(org.orgKey, { externalId: newExternalId(), workspaceId: org.workspaceId }));
  });

  it('lets contributors create and viewers only read (403 insufficient-role)', async () => {
    const org = await makeOrganization();
    const [viewer, contributor] = await Promise.all([
      makeMemberKey(org.workspaceId, 'viewer'),
      makeMemberKey(org.workspaceId, 'contributor'),
    ]);
    const externalId = newExternalId();

    const refused = await createExternalUser(viewer, { externalId });
    const created = await createExternalUser(contributor, { externalId });
    const read = await getExternalUser(viewer, externalId);

    expectProblem(refused, 403);
    expect(refused.body.type).toMatch(/insufficient-role$/);
    expect([created.status, read.status]).toEqual([204, 200]);
  });
});

describe('avatarFileId: a confirmed external_user_avatar upload of the workspace (issue 11 item 8)', () => {
  it('takes an upload made for this external user, and leaves the upload confirmed (referenced, not consumed)', async () => {
    const org = await makeOrganization();
    const externalId = newExternalId();
    const avatar = await uploadAvatar(org.workspaceKey, externalId);

    expectNoContent(await createExternalUser(org.workspaceKey, { externalId, avatarFileId: avatar.fileId }));
    const created = await readExternalUserBack(org.workspaceKey, externalId);
    expectNoContent(await patchExternalUser(org.workspaceKey, externalId, { avatarFileId: null }));
    const cleared = await readExternalUserBack(org.workspaceKey, externalId);
    expectNoContent(await patchExternalUser(org.workspaceKey, externalId, { avatarFileId: avatar.fileId }));
    const setAgain = await readExternalUserBack(org.workspaceKey, externalId);

    expect(created.avatarFileId).toBe(avatar.fileId);
    expect(cleared.avatarFileId).toBeNull();
    expect(setAgain.avatarFileId).toBe(avatar.fileId);
    expect((await readUploadRecord(avatar.fileId))?.state).toBe('confirmed');
  });

  it("answers 400 for an unknown, unconfirmed, misfiled or someone else's upload, and 403 for another workspace's", async () => {
    const org = await makeOrganization();
    const second = await makeSecondWorkspace(org.orgKey);
    const secondKey = (await createWorkspaceKey(second.id)).apiKey;
    const externalId = newExternalId();
    const [unconfirmed, forSomeoneElse, otherWorkspace, markupAsset] = await Promise.all([
      uploadAvatar(org.workspaceKey, externalId, { confirm: false }),
      uploadAvatar(org.workspaceKey, newExternalId()),
      uploadAvatar(secondKey, externalId),
      pngBytes().then((bytes) => uploadFile(org.workspaceKey, { bytes, filename: 'a.png', contentType: 'image/png' })),
    ]);

    const attempts = {
      unknown: await createExternalUser(org.workspaceKey, { externalId, avatarFileId: '00000000-0000-4000-8000-0000000000aa' }),
      unconfirmed: await createExternalUser(org.workspaceKey, { externalId, avatarFileId: unconfirmed.fileId }),
      forSomeoneElse: await createExternalUser(org.workspaceKey, { externalId, avatarFileId: forSomeoneElse.fileId }),
      markupAsset: await createExternalUser(org.workspaceKey, { externalId, avatarFileId: markupAsset.fileId }),
      otherWorkspace: await createExternalUser(org.workspaceKey, { externalId, avatarFileId: otherWorkspace.fileId }),
    };

    for (const refused of [attempts.unknown, attempts.unconfirmed, attempts.forSomeoneElse, attempts.markupAsset])
      expectProblem(refused, 400, '/body/avatarFileId');
    expectProblem(attempts.otherWorkspace, 403);
    expectProblem(await getExternalUser(org.workspaceKey, externalId), 404);
    const existing = await makeExternalUser(org.workspaceKey);
    expectProblem(await patchExternalUser(org.workspaceKey, existing.externalId, { avatarFileId: otherWorkspace.fileId }), 403);
    expectProblem(
      await patchExternalUser(org.workspaceKey, existing.externalId, { avatarFileId: unconfirmed.fileId }),
      400,
      '/body/avatarFileId',
    );
    expect((await getExternalUser(org.workspaceKey, existing.externalId)).body.data).toEqual(existing);
  });
});

describe('GET /users/external/:externalId', () => {
  it('answers 404 for an unknown externalId, and for one of another workspace', async () => {
    const org = await makeOrganization();
    const other = await makeOrganization();
    const theirs = await makeExternalUser(other.workspaceKey);

    expectProblem(await getExternalUser(org.workspaceKey, newExternalId()), 404);
    expectProblem(await getExternalUser(org.workspaceKey, theirs.externalId), 404);
    expectProblem(await getExternalUser(org.orgKey, theirs.externalId, { workspaceId: other.workspaceId }), 403);
  });
});

describe('PATCH /users/external/:externalId', () => {
  it('sets the fields given, clears those sent as null, keeps the rest, and renames the User in step', async () => {
    const org = await makeOrganization();
    const user = await makeExternalUser(org.workspaceKey, {
      name: 'Grace',
      email: 'grace@example.com',
      avatarUrl: 'https://cdn.example.com/g.png',
    });

    const patchAndRead = async (changes: Record<string, unknown>) => {
      expectNoContent(await patchExternalUser(org.workspaceKey, user.externalId, changes));
      return readExternalUserBack(org.workspaceKey, user.externalId);
    };

    const renamed = await patchAndRead({ name: 'Grace B. Hopper' });
    const nameOfRenamed = (await getUser(user.id))?.name;
    const unnamed = await patchAndRead({ name: null, avatarUrl: null });
    const nameOfUnnamed = (await getUser(user.id))?.name;
    const bare = await patchAndRead({ email: null });

    expect(renamed).toMatchObject({ name: 'Grace B. Hopper', email: 'grace@example.com', avatarUrl: 'https://cdn.example.com/g.png' });
    expect(renamed.modifiedAt).toBeGreaterThan(user.modifiedAt);
    expect(nameOfRenamed).toBe('Grace B. Hopper');
    expect(unnamed).toMatchObject({ name: null, email: 'grace@example.com', avatarUrl: null });
    expect(nameOfUnnamed).toBe('grace@example.com');
    expect(bare).toMatchObject({ id: user.id, name: null, email: null, avatarUrl: null, createdAt: user.createdAt });
    expect((await getUser(user.id))?.name).toBe(user.externalId);
  });

  it('writes nothing when nothing changes (modifiedAt stays)', async () => {
    const org = await makeOrganization();
    const user = await makeExternalUser(org.workspaceKey, { name: 'Same' });

    const patched = await patchExternalUser(org.workspaceKey, user.externalId, { name: 'Same', email: null });

    expectNoContent(patched);
    expect(await readExternalUserBack(org.workspaceKey, user.externalId)).toEqual(user);
  });

  it('answers 400 for a bad field and 404 for an unknown externalId; a body that changes nothing is a 204 (every field is optional)', async () => {
    const org = await makeOrganization();
    const user = await makeExternalUser(org.workspaceKey);

    expect((await patchExternalUser(org.workspaceKey, user.externalId, {})).status).toBe(204);
    expectProblem(await patchExternalUser(org.workspaceKey, user.externalId, { email: 'nope' }), 400, '/body/email');
    expectProblem(
      await patchExternalUser(org.workspaceKey, user.externalId, { avatarUrl: 'ftp://x.example.com/a.png' }),
      400,
      '/body/avatarUrl',
    );
    expectProblem(await patchExternalUser(org.workspaceKey, newExternalId(), { name: 'Nobody' }), 404);
  });
});

describe('DELETE /users/external/:externalId', () => {
  it('deletes the record (204, then 404) and leaves its User named "Former user"; the externalId may come back as a new user', async () => {
    const org = await makeOrganization();
    const user = await makeExternalUser(org.workspaceKey, { name: 'Leaving' });

    const deleted = await deleteExternalUser(org.workspaceKey, user.externalId);
    const again = await deleteExternalUser(org.workspaceKey, user.externalId);
    const recreated = await createExternalUser(org.workspaceKey, { externalId: user.externalId, name: 'Back' });

    expect(deleted.status).toBe(204);
    expectProblem(again, 404);
    expect(await getUser(user.id)).toMatchObject({ kind: 'external', name: 'Former user' });
    expectNoContent(recreated);
    expect((await readExternalUserBack(org.workspaceKey, user.externalId)).id).not.toBe(user.id);
  });

  it('needs an admin: a contributor gets 403 and the user stays', async () => {
    const org = await makeOrganization();
    const [contributor, admin] = await Promise.all([
      makeMemberKey(org.workspaceId, 'contributor'),
      makeMemberKey(org.workspaceId, 'admin'),
    ]);
    const user = await makeExternalUser(org.workspaceKey);

    expectProblem(await deleteExternalUser(contributor, user.externalId), 403);
    expect((await getExternalUser(contributor, user.externalId)).status).toBe(200);
    expect((await deleteExternalUser(admin, user.externalId)).status).toBe(204);
  });
});
