import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '../../shared/clients.js';
import { getConfig } from '../../shared/config.js';
import {
  externalUserKey,
  getExternalUser as readExternalUserRecord,
  installationSource,
  insertExternalUser,
} from '../../shared/db/external-users.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { makeOrganization, useOwnLocalStack, type ApiResponse, type Org } from '../support/api.js';
import { customerJwt, exchange, makeCustomerKeys, makeInstallation, type CustomerKeys } from '../support/customer-jwts.js';
import { createExternalUser, expectNoContent, newExternalId, patchExternalUser, readExternalUserBack } from '../support/external-users.js';
import { expectProblem } from '../support/problems.js';
import { runAdminAsync } from '../support/processes.js';
import { idpToken, sdkExchange } from '../support/sdk.js';
import { getThread } from '../support/thread-reads.js';
import { createThread, makeTypedMarkup, reply } from '../support/threads.js';

/**
 * DESIGN.md "Trust rules": end users belong to the source that made them, an installation (its
 * customer JWTs), the identity provider (SDK exchange) or the API (POST /users/external). An
 * exchange acts only as an external user of its own source; an API-made user is bound to the first
 * installation that exchanges its externalId; another source's `sub` is a 403 that changes nothing.
 */

const ORIGIN = 'https://sources.example.com';

interface Source {
  keys: CustomerKeys;
  config: { installationId: string; expectedAud: string; expectedIss: string };
  publicKey: string;
}

// `users assign-source` for a whole workspace Scans the whole table: this file's own.
const { dataDir } = useOwnLocalStack();

let org: Org;
let markup: MarkupRecord;
let a: Source;
let b: Source;

async function makeSource(extra: Record<string, unknown> = {}): Promise<Source> {
  const keys = makeCustomerKeys();
  const made = await makeInstallation(org, keys, extra);
  return { keys, config: made.config, publicKey: made.installation.publicKey };
}

beforeAll(async () => {
  org = await makeOrganization('Sources');
  markup = await makeTypedMarkup(org, 'webpage', { url: 'https://sources.example.com/page' });
  [a, b] = [await makeSource({ allowedOrigins: [ORIGIN] }), await makeSource()];
});

/** POST /auth/exchange with a JWT of `source` for `sub`. */
const exchangeVia = async (source: Source, sub: string, claims: Record<string, unknown> = {}) =>
  exchange(await customerJwt(source.keys, source.config, { sub, ...claims }));
/** POST /auth/sdk-exchange for the identity provider's user `sub`, through installation A (which admits ORIGIN). */
const sdkExchangeAs = async (sub: string, claims: Record<string, unknown> = {}) =>
  sdkExchange(await idpToken({ sub, ...claims }), { publicKey: a.publicKey, markupId: markup.id, sdkOrigin: ORIGIN });

function expectOk(response: ApiResponse): Record<string, any> {
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** A 403 that names what went wrong and hands out no token. */
function expectOtherSource(response: ApiResponse): void {
  expectProblem(response, 403);
  expect(response.body.detail).toMatch(/another source/);
  expect(JSON.stringify(response.body)).not.toContain('exchangeToken');
}

describe('an installation acts only as its own end users (issue 28 item 2)', () => {
  it("refuses B's JWT for A's alice with 403: her thread, her message and her name, email and picture stay as they were", async () => {
    const alice = `alice-${randomUUID()}`;
    const answer = expectOk(
      await exchangeVia(a, alice, { name: 'Alice', email: 'alice@example.com', picture: 'https://cdn.example.com/alice.png' }),
    );
    const thread = await createThread(answer.exchangeToken, markup);
    const message = await reply(answer.exchangeToken, thread.id, { content: 'By Alice' });
    const [threadBefore, userBefore, recordBefore] = await Promise.all([
      getThread(org.workspaceKey, thread.id),
      readExternalUserBack(org.workspaceKey, alice),
      readExternalUserRecord(org.workspaceId, alice),
    ]);

    const refused = await exchangeVia(b, alice, {
      name: 'Mallory',
      email: 'mallory@example.com',
      picture: 'https://cdn.example.com/mallory.png',
      markupRole: 'project:owner',
    });

    expectOtherSource(refused);
    expect(await readExternalUserBack(org.workspaceKey, alice)).toEqual(userBefore);
    expect(userBefore).toMatchObject({ name: 'Alice', email: 'alice@example.com', avatarUrl: 'https://cdn.example.com/alice.png' });
    expect(await readExternalUserRecord(org.workspaceId, alice)).toEqual(recordBefore);
    expect(await getThread(org.workspaceKey, thread.id)).toEqual(threadBefore);
    expect(threadBefore.messages.map((each: { id: string }) => each.id)).toContain(message.id);
    // A keeps exchanging alice as before.
    expect(expectOk(await exchangeVia(a, alice)).userId).toBe(answer.userId);
  });

  it("refuses an installation's JWT naming an SDK (identity-provider) user, and leaves that user as it was", async () => {
    const sub = `idp-${randomUUID()}`;
    const answer = expectOk(await sdkExchangeAs(sub, { name: 'Grace' }));
    await createThread(answer.exchangeToken, markup);
    const before = await readExternalUserRecord(org.workspaceId, sub);

    expectOtherSource(await exchangeVia(a, sub, { name: 'Not Grace' }));
    expectOtherSource(await exchangeVia(b, sub));

    expect(await readExternalUserRecord(org.workspaceId, sub)).toEqual(before);
    expect(expectOk(await sdkExchangeAs(sub)).userId).toBe(answer.userId);
  });

  it("refuses an SDK exchange naming an installation's user, even through that installation", async () => {
    const sub = `cust-${randomUUID()}`;
    const answer = expectOk(await exchangeVia(a, sub, { name: 'Customer' }));
    const before = await readExternalUserRecord(org.workspaceId, sub);

    expectOtherSource(await sdkExchangeAs(sub, { name: 'Impostor' }));

    expect(await readExternalUserRecord(org.workspaceId, sub)).toEqual(before);
    expect(expectOk(await exchangeVia(a, sub)).userId).toBe(answer.userId);
  });
});

describe('an API-made user belongs to the first installation that exchanges it (issue 28 item 2)', () => {
  it('binds it to the first installation: the same user for A, 403 for B and for the SDK exchange', async () => {
    const externalId = newExternalId('api');
    expectNoContent(await createExternalUser(org.workspaceKey, { externalId, name: 'Made by the API' }));
    const made = await readExternalUserBack(org.workspaceKey, externalId);

    const first = expectOk(await exchangeVia(a, externalId, { name: 'Named by A' }));
    const byB = await exchangeVia(b, externalId, { name: 'Named by B' });
    const bySdk = await sdkExchangeAs(externalId, { name: 'Named by the provider' });
    const again = expectOk(await exchangeVia(a, externalId));

    expect(first.userId).toBe(made.id);
    expectOtherSource(byB);
    expectOtherSource(bySdk);
    expect(again.userId).toBe(made.id);
    expect((await readExternalUserBack(org.workspaceKey, externalId)).name).toBe('Named by A');
  });

  it('lets exactly one of two installations racing for a new API-made user win, and the same for a new sub (30 runs each)', async () => {
    const started = performance.now();
    for (let run = 0; run < 30; run += 1) {
      const apiMade = newExternalId(`race-api-${run}`);
      expectNoContent(await createExternalUser(org.workspaceKey, { externalId: apiMade }));
      const fresh = newExternalId(`race-new-${run}`);

      for (const externalId of [apiMade, fresh]) {
        const [jwtA, jwtB] = await Promise.all([
          customerJwt(a.keys, a.config, { sub: externalId, name: 'A' }),
          customerJwt(b.keys, b.config, { sub: externalId, name: 'B' }),
        ]);
        const [byA, byB] = await Promise.all([exchange(jwtA), exchange(jwtB)]);

        const statuses = [byA.status, byB.status];
        expect(statuses.sort(), `run ${run}, ${externalId}: ${JSON.stringify([byA.body, byB.body])}`).toEqual([200, 403]);
        const [winner, loser] = byA.status === 200 ? [a, b] : [b, a];
        const stored = await readExternalUserBack(org.workspaceKey, externalId);
        expect(stored.name, `run ${run}: the loser's claims wrote nothing`).toBe(winner === a ? 'A' : 'B');
        expect(expectOk(await exchangeVia(winner, externalId)).userId).toBe(stored.id);
        expectOtherSource(await exchangeVia(loser, externalId));
      }
    }
    console.log(`end-user source race: 30 runs x 2 (API-made, new) in ${Math.round(performance.now() - started)} ms`);
  }, 120_000);

  it('lets exactly one of an installation and the identity provider racing for a new sub win (30 runs)', async () => {
    for (let run = 0; run < 30; run += 1) {
      const externalId = newExternalId(`race-sdk-${run}`);
      const [jwt, idp] = await Promise.all([
        customerJwt(a.keys, a.config, { sub: externalId, name: 'A' }),
        idpToken({ sub: externalId, name: 'Provider' }),
      ]);

      const [byA, bySdk] = await Promise.all([
        exchange(jwt),
        sdkExchange(idp, { publicKey: a.publicKey, markupId: markup.id, sdkOrigin: ORIGIN }),
      ]);

      expect([byA.status, bySdk.status].sort(), `run ${run}: ${JSON.stringify([byA.body, bySdk.body])}`).toEqual([200, 403]);
      const stored = await readExternalUserBack(org.workspaceKey, externalId);
      expect(stored.name, `run ${run}`).toBe(byA.status === 200 ? 'A' : 'Provider');
    }
  }, 120_000);
});

/**
 * Legacy end users: records written before sources were recorded carry none, and any installation,
 * the identity provider or the API may have made them. Only a workspace's sole installation binds
 * one; with two, every exchange is refused until an operator runs `admin users assign-source`.
 */
// The admin command runs as its own process (seconds to start on a loaded machine).
describe('an end user from before sources were recorded (issue 28 item 2)', { timeout: 120_000 }, () => {
  /** `source` taken off a record, as every record written before sources were recorded has none. */
  const makeLegacy = (workspaceId: string, externalId: string) =>
    getDb().send(
      new UpdateCommand({
        TableName: getConfig().tableName,
        Key: externalUserKey(workspaceId, externalId),
        UpdateExpression: 'REMOVE #source',
        ExpressionAttributeNames: { '#source': 'source' },
      }),
    );

  /** A legacy record written directly, as old data (no source). */
  async function writeLegacy(target: Org, externalId: string, name: string): Promise<string> {
    const now = Date.now();
    const userId = randomUUID();
    const base = {
      workspaceId: target.workspaceId,
      organizationId: target.organizationId,
      externalId,
      userId,
      name,
      email: null,
      avatarUrl: null,
      avatarFileId: null,
    };
    expect(await insertExternalUser({ ...base, createdAt: now, modifiedAt: now })).toBe('written');
    expect((await readExternalUserRecord(target.workspaceId, externalId))?.source).toBeUndefined();
    return userId;
  }

  async function sourcesOf(target: Org, count: number): Promise<Source[]> {
    const made: Source[] = [];
    for (let i = 0; i < count; i += 1) {
      const keys = makeCustomerKeys();
      const installation = await makeInstallation(target, keys);
      made.push({ keys, config: installation.config, publicKey: installation.installation.publicKey });
    }
    return made;
  }

  it("refuses B's JWT (and A's, and the SDK's) for A's old alice with 403 while the workspace has two installations: nothing changes", async () => {
    const alice = `alice-${randomUUID()}`;
    const answer = expectOk(await exchangeVia(a, alice, { name: 'Alice', email: 'alice@example.com' }));
    const thread = await createThread(answer.exchangeToken, markup);
    await makeLegacy(org.workspaceId, alice);
    const [threadBefore, recordBefore] = await Promise.all([
      getThread(org.workspaceKey, thread.id),
      readExternalUserRecord(org.workspaceId, alice),
    ]);

    expectOtherSource(await exchangeVia(b, alice, { name: 'Mallory', email: 'mallory@example.com' }));
    expectOtherSource(await exchangeVia(a, alice, { name: 'Alice again' }));
    expectOtherSource(await sdkExchangeAs(alice, { name: 'Provider' }));

    expect(await readExternalUserRecord(org.workspaceId, alice)).toEqual(recordBefore);
    expect(recordBefore).toMatchObject({ name: 'Alice', email: 'alice@example.com', userId: answer.userId });
    expect(await getThread(org.workspaceKey, thread.id)).toEqual(threadBefore);
  });

  it("binds it to the workspace's sole installation on that installation's first exchange, and the API still manages it", async () => {
    const solo = await makeOrganization('Sole installation');
    const [only] = await sourcesOf(solo, 1);
    const managed = newExternalId('legacy-api');
    const managedId = await writeLegacy(solo, managed, 'Managed');
    const legacy = newExternalId('legacy');
    const userId = await writeLegacy(solo, legacy, 'Old');

    const first = expectOk(await exchangeVia(only!, legacy, { name: 'Old, renamed' }));
    const again = expectOk(await exchangeVia(only!, legacy));

    expect([first.userId, again.userId]).toEqual([userId, userId]);
    expect(await readExternalUserRecord(solo.workspaceId, legacy)).toMatchObject({
      source: installationSource(only!.config.installationId),
      name: 'Old, renamed',
    });
    // The API reads and changes a legacy record as before, and leaves it legacy.
    expect(await readExternalUserBack(solo.workspaceKey, managed)).toMatchObject({ id: managedId, name: 'Managed' });
    expectNoContent(await patchExternalUser(solo.workspaceKey, managed, { name: 'Managed, renamed' }));
    expect((await readExternalUserRecord(solo.workspaceId, managed))?.source).toBeUndefined();
  });

  it('admin users assign-source hands the legacy users of a workspace to one installation, idempotently; then only that one exchanges them', async () => {
    const both = await makeOrganization('Two installations');
    const [first, second] = await sourcesOf(both, 2);
    const legacy = [newExternalId('legacy-1'), newExternalId('legacy-2')];
    const userIds = [await writeLegacy(both, legacy[0]!, 'One'), await writeLegacy(both, legacy[1]!, 'Two')];
    const sourced = newExternalId('sourced');
    expectOk(await exchangeVia(second!, sourced));
    expectOtherSource(await exchangeVia(first!, legacy[0]!));
    const source = installationSource(first!.config.installationId);

    const run = await runAdminAsync(dataDir, ['users', 'assign-source', '--workspace', both.workspaceId, '--source', source]);
    const rerun = await runAdminAsync(dataDir, ['users', 'assign-source', '--workspace', both.workspaceId, '--source', source]);
    const reruns = await Promise.all(
      legacy.map((id) =>
        runAdminAsync(dataDir, ['users', 'assign-source', '--workspace', both.workspaceId, '--source', source, '--external-id', id]),
      ),
    );

    expect(run.status, run.stderr).toBe(0);
    expect(run.json).toEqual({ workspaceId: both.workspaceId, source, assigned: expect.arrayContaining(legacy), alreadySourced: [] });
    expect(run.json.assigned).toHaveLength(2);
    expect(rerun.json).toEqual({ workspaceId: both.workspaceId, source, assigned: [], alreadySourced: [] });
    for (const [index, rerun] of reruns.entries())
      expect(rerun.json).toEqual({ workspaceId: both.workspaceId, source, assigned: [], alreadySourced: [legacy[index]] });
    expect((await exchangeVia(first!, legacy[0]!)).body.data.userId).toBe(userIds[0]);
    expect((await exchangeVia(first!, legacy[1]!)).body.data.userId).toBe(userIds[1]);
    expectOtherSource(await exchangeVia(second!, legacy[0]!));
    expect((await readExternalUserRecord(both.workspaceId, sourced))?.source).toBe(installationSource(second!.config.installationId));
  });

  it('admin users assign-source takes one --external-id, and refuses an installation of another workspace or a bad --source', async () => {
    const both = await makeOrganization('Assign one');
    const [first] = await sourcesOf(both, 2);
    const [elsewhere] = await sourcesOf(await makeOrganization('Elsewhere'), 1);
    const legacy = newExternalId('legacy');
    const other = newExternalId('legacy-other');
    await writeLegacy(both, legacy, 'One');
    await writeLegacy(both, other, 'Other');
    const assign = (...extra: string[]) => runAdminAsync(dataDir, ['users', 'assign-source', '--workspace', both.workspaceId, ...extra]);

    const foreign = await assign('--source', installationSource(elsewhere!.config.installationId));
    const bad = await assign('--source', 'somebody');
    const one = await assign('--source', 'identity-provider', '--external-id', legacy);
    const oneAgain = await assign('--source', 'api', '--external-id', legacy);

    expect(foreign.status).toBe(1);
    expect(foreign.stderr).toContain('is not an installation of workspace');
    expect(bad.status).toBe(2);
    expect(one.json).toEqual({ workspaceId: both.workspaceId, source: 'identity-provider', assigned: [legacy], alreadySourced: [] });
    expect(oneAgain.json).toEqual({ workspaceId: both.workspaceId, source: 'api', assigned: [], alreadySourced: [legacy] });
    expect((await readExternalUserRecord(both.workspaceId, legacy))?.source).toBe('identity-provider');
    expect((await readExternalUserRecord(both.workspaceId, other))?.source).toBeUndefined();
    expectOtherSource(await exchangeVia(first!, legacy));
  });
});
