import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import { getExternalUser as readExternalUser, installationSource } from '../../shared/db/external-users.js';
import { threadKey } from '../../shared/db/threads.js';
import { getUser } from '../../shared/db/users.js';
import { upsertExternalUserFromClaims } from '../../shared/domain/users/external-users.js';
import { makeOrganization, type Org } from '../support/api.js';
import { makeConversation } from '../support/conversations.js';
import { deleteExternalUser, getExternalUser, makeExternalUser, newExternalId, patchExternalUser } from '../support/external-users.js';
import { countRequests } from '../support/request-count.js';
import { getThread } from '../support/thread-reads.js';

const scopeOf = (org: Org) => ({ id: org.workspaceId, organizationId: org.organizationId });
/** The installation these exchanges come from (the rule that end users belong to it: end-user-sources.test.ts). */
const SOURCE = installationSource(randomUUID());

describe('upsertExternalUserFromClaims: the external user of a token exchange (DESIGN "End users and external users")', () => {
  it('creates the external user and its User from the claims, picture as avatarUrl', async () => {
    const org = await makeOrganization();
    const externalId = newExternalId('sub');

    const result = await upsertExternalUserFromClaims(
      scopeOf(org),
      externalId,
      { name: 'Ada', email: 'ada@example.com', picture: 'https://cdn.example.com/ada.png' },
      SOURCE,
    );
    const shown = await getExternalUser(org.workspaceKey, externalId);

    expect(result).toEqual({ userId: shown.body.data.id, name: 'Ada' });
    expect(shown.body.data).toMatchObject({
      externalId,
      name: 'Ada',
      email: 'ada@example.com',
      avatarUrl: 'https://cdn.example.com/ada.png',
      avatarFileId: null,
    });
    expect(await getUser(result.userId)).toMatchObject({ kind: 'external', name: 'Ada' });
  });

  it('uses a user created ahead of time and updates only the fields the claims carry', async () => {
    const org = await makeOrganization();
    const made = await makeExternalUser(org.workspaceKey, {
      name: 'Made',
      email: 'made@example.com',
      avatarUrl: 'https://cdn.example.com/m.png',
    });

    const result = await upsertExternalUserFromClaims(scopeOf(org), made.externalId, { name: 'Renamed by the claims' }, SOURCE);
    const shown = (await getExternalUser(org.workspaceKey, made.externalId)).body.data;

    expect(result).toEqual({ userId: made.id, name: 'Renamed by the claims' });
    expect(shown).toMatchObject({ name: 'Renamed by the claims', email: 'made@example.com', avatarUrl: 'https://cdn.example.com/m.png' });
    expect((await getUser(made.id))?.name).toBe('Renamed by the claims');
  });

  it('writes nothing, one GetItem in all, when the claims change nothing or carry nothing acceptable', async () => {
    const org = await makeOrganization();
    const externalId = newExternalId('sub');
    await upsertExternalUserFromClaims(scopeOf(org), externalId, { name: 'Steady', email: 'steady@example.com' }, SOURCE);
    const before = await readExternalUser(org.workspaceId, externalId);

    const exchanges = [
      await countRequests(() =>
        upsertExternalUserFromClaims(scopeOf(org), externalId, { name: 'Steady', email: 'steady@example.com' }, SOURCE),
      ),
      await countRequests(() => upsertExternalUserFromClaims(scopeOf(org), externalId, {}, SOURCE)),
      await countRequests(() =>
        upsertExternalUserFromClaims(
          scopeOf(org),
          externalId,
          { picture: 'http://insecure.example.com/p.png', email: 'not an address' },
          SOURCE,
        ),
      ),
    ];

    expect(exchanges.map((exchange) => exchange.result.name)).toEqual(['Steady', 'Steady', 'Steady']);
    expect(exchanges.map((exchange) => exchange.counts)).toEqual([{ GetItemCommand: 1 }, { GetItemCommand: 1 }, { GetItemCommand: 1 }]);
    expect(await readExternalUser(org.workspaceId, externalId)).toEqual(before);
  });

  it('names the user after the email, then the externalId, when the claims carry no name', async () => {
    const org = await makeOrganization();

    const byEmail = await upsertExternalUserFromClaims(scopeOf(org), newExternalId('sub'), { email: 'only@example.com' }, SOURCE);
    const bySub = newExternalId('sub');
    const byId = await upsertExternalUserFromClaims(scopeOf(org), bySub, {}, SOURCE);

    expect(byEmail.name).toBe('only@example.com');
    expect(byId.name).toBe(bySub);
  });

  it('refuses a sub that cannot be an externalId (400)', async () => {
    const org = await makeOrganization();

    for (const sub of ['', 'x'.repeat(256), 'a\ud800b']) {
      await expect(upsertExternalUserFromClaims(scopeOf(org), sub, {}, SOURCE)).rejects.toMatchObject({
        status: 400,
        slug: 'invalid-sub-claim',
      });
    }
  });

  it('ends concurrent first exchanges of one sub with one external user and one userId (20 runs)', async () => {
    const org = await makeOrganization();
    const started = performance.now();

    for (let run = 0; run < 20; run += 1) {
      const externalId = newExternalId(`race-${run}`);
      const names = ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon'];

      const results = await Promise.all(names.map((name) => upsertExternalUserFromClaims(scopeOf(org), externalId, { name }, SOURCE)));

      const stored = (await readExternalUser(org.workspaceId, externalId))!;
      expect(new Set(results.map((result) => result.userId)), `run ${run}`).toEqual(new Set([stored.userId]));
      expect(names, `run ${run}`).toContain(stored.name);
      expect((await getUser(stored.userId))?.name, `run ${run}: the User follows the record`).toBe(stored.name);
    }
    console.log(`external-user upsert race: 20 runs of 5 concurrent first exchanges in ${Math.round(performance.now() - started)} ms`);
  });
});

describe('upsertExternalUserFromClaims binds an API-made user to one installation (DESIGN "Trust rules")', () => {
  it('lets exactly one of five installations binding one API-made user at once win; the others get 403 and write nothing (20 runs)', async () => {
    const org = await makeOrganization();
    const sources = Array.from({ length: 5 }, () => installationSource(randomUUID()));

    for (let run = 0; run < 20; run += 1) {
      const made = await makeExternalUser(org.workspaceKey, { name: 'Made' });

      const outcomes = await Promise.allSettled(
        sources.map((source, index) =>
          upsertExternalUserFromClaims(scopeOf(org), made.externalId, { name: `Installation ${index}` }, source),
        ),
      );

      const won = outcomes.flatMap((outcome, index) => (outcome.status === 'fulfilled' ? [index] : []));
      expect(won, `run ${run}`).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected')
          expect(outcome.reason, `run ${run}`).toMatchObject({ status: 403, slug: 'end-user-of-another-source' });
      }
      const stored = (await readExternalUser(org.workspaceId, made.externalId))!;
      expect(stored, `run ${run}`).toMatchObject({ source: sources[won[0]!], name: `Installation ${won[0]}`, userId: made.id });
    }
  });
});

describe('threads keep an author: the external user as a guest, "Former user" once deleted (Resources: Thread `user`)', () => {
  it("shows the external user's current name with guest: true, through renames and deletion", async () => {
    const { org, markup, thread } = await makeConversation();
    const user = await makeExternalUser(org.workspaceKey, { name: 'Guest author' });
    // Threads by end users are written with exchange tokens (another part of issue 11); here the
    // thread is handed to the external user's User directly, which is all the view reads.
    await getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: threadKey(markup.id, thread.id),
        UpdateExpression: 'SET userId = :user',
        ExpressionAttributeValues: { ':user': user.id },
      }),
    );

    const first = (await getThread(org.workspaceKey, thread.id)).user;
    await patchExternalUser(org.workspaceKey, user.externalId, { name: 'Guest renamed' });
    const renamed = (await getThread(org.workspaceKey, thread.id)).user;
    await deleteExternalUser(org.workspaceKey, user.externalId);
    const former = (await getThread(org.workspaceKey, thread.id)).user;

    expect(first).toMatchObject({ id: user.id, name: 'Guest author', guest: true });
    expect(renamed).toMatchObject({ id: user.id, name: 'Guest renamed', guest: true });
    expect(former).toMatchObject({ id: user.id, name: 'Former user', guest: true });
  });
});
