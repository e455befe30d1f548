import { createPrivateKey, randomUUID } from 'node:crypto';
import { getExchangeSigner } from '../../shared/auth/exchange-keys.js';
import type { EndUserRole } from '../../shared/auth/permissions.js';
import { signSessionToken } from '../../shared/auth/session-tokens.js';
import { externalUserKey } from '../../shared/db/external-users.js';
import type { MarkupRecord } from '../../shared/db/items.js';
import { queryAll, queryPrefix } from '../../shared/db/core/paging.js';
import { batchGet } from '../../shared/db/core/transact.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { expectedClaimsOf } from '../../shared/domain/sign-in/customer-exchange.js';
import { createExternalUser } from '../../shared/domain/users/external-users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization, type ApiResponse } from './api.js';
import { addMember } from './conversations.js';
import { customerJwt, makeCustomerKeys, type CustomerKeys } from './customer-jwts.js';
import { endUserToken, makeEndUser, type EndUserSpec } from './end-users.js';
import { setPlan } from './fixtures.js';
import { createInstallation, customerKeyPair } from './installations.js';
import { idpToken, sdkExchange } from './sdk.js';
import { recordAttempt } from './webhook-deliveries.js';
import { createWebhookRegistration } from './webhooks.js';
import { makeFolder } from './markups.js';
import { createThread, makeTypedMarkup, reply } from './threads.js';
import { pngBytes, uploadFile } from './uploads.js';
import { makeSecondWorkspace } from './workspaces.js';

/** The origin the fixture's installation admits (SDK exchange cases). */
export const MATRIX_ORIGIN = 'https://matrix.example.com';

/**
 * The callers of the authorization matrix: no key, a broken key, keys outside the fixture, each
 * member role, the plain keys, and end users (exchange tokens): one per markup role, an owner whose
 * token is bound to another markup of the workspace, an owner of another workspace, and (issue 28)
 * an end user of each source of the fixture's workspace, through the real exchanges: two
 * installations and the identity provider (SDK exchange).
 */
export const CALLERS = [
  'none',
  'badKey',
  'otherOrganization',
  'otherWorkspace',
  'viewer',
  'contributor',
  'admin',
  'owner',
  'workspaceKey',
  'organizationKey',
  'endViewer',
  'endContributor',
  'endOwner',
  'endBoundElsewhere',
  'endOtherWorkspace',
  'endInstallationA',
  'endInstallationB',
  'endSdk',
  // Issue 30: session tokens of the review app, of the same members as the member keys, and of a member of another workspace only.
  'sessionViewer',
  'sessionContributor',
  'sessionAdmin',
  'sessionOwner',
  'sessionOutsider',
] as const;
export type Caller = (typeof CALLERS)[number];
export const MEMBER_ROLES = ['viewer', 'contributor', 'admin', 'owner'] as const;
export type EndUserCaller = Extract<Caller, `end${string}`>;
/**
 * The markup role of each end-user caller; `endBoundElsewhere` and `endOtherWorkspace` are owners
 * who reach nothing of the fixture; the sources' end users have the role their exchanges give by
 * default (the SDK exchange's only one), bound to the fixture's markup for the SDK.
 */
export const END_USER_CALLERS: Record<EndUserCaller, EndUserRole> = {
  endViewer: 'project:viewer',
  endContributor: 'project:contributor',
  endOwner: 'project:owner',
  endBoundElsewhere: 'project:owner',
  endOtherWorkspace: 'project:owner',
  endInstallationA: 'project:contributor',
  endInstallationB: 'project:contributor',
  endSdk: 'project:contributor',
};
export const isEndUserCaller = (caller: Caller): caller is EndUserCaller => caller in END_USER_CALLERS;

/** Session-token callers (issue 30): each a member of the fixture's workspace with the role of the member key of that role. */
export const SESSION_CALLERS = {
  sessionViewer: 'viewer',
  sessionContributor: 'contributor',
  sessionAdmin: 'admin',
  sessionOwner: 'owner',
} as const;
export type SessionCaller = Extract<Caller, `session${string}`>;
export const isSessionCaller = (caller: Caller): caller is SessionCaller => caller.startsWith('session');
/** The member role a caller acts with when it is a member key or a member's session; undefined for everyone else. */
export const memberRoleOf = (caller: Caller): (typeof MEMBER_ROLES)[number] | undefined =>
  caller in SESSION_CALLERS
    ? SESSION_CALLERS[caller as keyof typeof SESSION_CALLERS]
    : (MEMBER_ROLES as readonly Caller[]).includes(caller)
      ? (caller as (typeof MEMBER_ROLES)[number])
      : undefined;

/**
 * The end users of the workspace's sources (DESIGN.md "Trust rules": end users belong to the source
 * that made them), with the source each was exchanged through; their tokens are real exchanges.
 */
export const SOURCE_CALLERS = { endInstallationA: 'installationA', endInstallationB: 'installationB', endSdk: 'identityProvider' } as const;
export type SourceCaller = keyof typeof SOURCE_CALLERS;
export const isSourceCaller = (caller: Caller): caller is SourceCaller => caller in SOURCE_CALLERS;
/** Whose threads and messages each source's end user acts on: another source's, so every kind of source meets another once. */
export const VICTIM_OF: Record<SourceCaller, SourceCaller> = {
  endInstallationA: 'endInstallationB',
  endInstallationB: 'endSdk',
  endSdk: 'endInstallationA',
};
/** End users whose tokens the test process mints directly (`makeEndUser`), for no installation. */
type MintedCaller = Exclude<EndUserCaller, SourceCaller>;

const BAD_KEY = `rbk_${'0'.repeat(32)}_${'A'.repeat(43)}`;

/**
 * One organization whose default workspace holds a record of every kind an operation can act on,
 * members of every role, and keys outside it; destructive operations get targets of their own.
 * Records authored by someone are written by the plain workspace key, so a member or end user
 * acting on them acts on other people's records, except `ownMessages`, one per member role and
 * end-user role that may write. Beside them, `sources`: an end user of each of the workspace's
 * sources (installations A and B, the identity provider) with a thread and a message of its own.
 */
export async function makeAuthorizationFixture() {
  const org = await makeOrganization('Matrix');
  await setPlan(org.organizationId, {
    storageFeatureEnabled: true,
    pauseCommentsEnabled: true,
    markupLimit: null,
    storageLimitBytes: null,
  });
  const workspace = (await getWorkspace(org.workspaceId))!;
  const ref = { organizationId: org.organizationId, workspaceId: org.workspaceId };
  const [other, second, members] = await Promise.all([
    makeOrganization(),
    makeSecondWorkspace(org.orgKey),
    Promise.all(MEMBER_ROLES.map((role) => addMember(org.workspaceId, role))),
  ]);
  const otherWorkspaceKey = await createWorkspaceKey(second.id);
  const outsider = await addMember(second.id, 'owner');
  const sessionUsers: Record<SessionCaller, string> = {
    ...(Object.fromEntries(
      Object.entries(SESSION_CALLERS).map(([caller, role]) => [caller, members[MEMBER_ROLES.indexOf(role)]!.userId]),
    ) as Record<keyof typeof SESSION_CALLERS, string>),
    sessionOutsider: outsider.userId,
  };
  // Targets of the member routes: a viewer whose role changes, a contributor who is removed.
  const [roleTarget, removedMember] = await Promise.all([addMember(org.workspaceId, 'viewer'), addMember(org.workspaceId, 'contributor')]);
  const folder = (name: string) => makeFolder(ref, { name: `${name} ${randomUUID().slice(0, 6)}` });
  const [markup, movedMarkup, deletedMarkup, bulkDeletedMarkup, elsewhereMarkup, mainFolder, archivedFolder, movedFolder, deletedFolder] =
    await Promise.all([
      makeTypedMarkup(ref, 'image'),
      makeTypedMarkup(ref, 'image'),
      makeTypedMarkup(ref, 'image'),
      makeTypedMarkup(ref, 'image'),
      makeTypedMarkup(ref, 'image'),
      folder('Main'),
      folder('Archived'),
      folder('Moved'),
      folder('Deleted'),
    ]);
  const [thread, deletedThread] = [await createThread(org.workspaceKey, markup), await createThread(org.workspaceKey, markup)];
  const message = await reply(org.workspaceKey, thread.id, { content: 'By the workspace key' });
  const deletedMessage = await reply(org.workspaceKey, thread.id, { content: 'To delete' });
  const ownMessages: Partial<Record<Caller, string>> = {};
  for (const [index, role] of MEMBER_ROLES.entries()) {
    if (role !== 'viewer') ownMessages[role] = (await reply(members[index]!.key, thread.id, { content: `By the ${role}` })).id;
  }
  const endUsers = Object.fromEntries(
    (Object.entries(END_USER_CALLERS) as [EndUserCaller, EndUserRole][])
      .filter(([caller]) => !isSourceCaller(caller))
      .map(([caller, markupRole]): [EndUserCaller, EndUserSpec] => [
        caller,
        {
          organizationId: org.organizationId,
          workspaceId: caller === 'endOtherWorkspace' ? second.id : org.workspaceId,
          markupRole,
          userId: randomUUID(),
          ...(caller === 'endBoundElsewhere' ? { markupId: elsewhereMarkup.id } : {}),
        },
      ]),
  ) as Record<MintedCaller, EndUserSpec>;
  // Each end user's installation and external user exist before the first snapshot (`makeEndUser`).
  await Promise.all(Object.values(endUsers).map((spec) => makeEndUser(spec)));
  for (const caller of ['endContributor', 'endOwner'] as const) {
    ownMessages[caller] = (await reply(await endUserToken(endUsers[caller]), thread.id, { content: `By ${caller}` })).id;
  }
  const png = await pngBytes();
  const upload = (name: string) =>
    uploadFile(org.workspaceKey, { bytes: png, filename: `${name}.png`, contentType: 'image/png', resourceId: mainFolder.id });
  const [asset, completed, commentUpload] = await Promise.all([
    upload('asset'),
    upload('completed'),
    // Posted but not confirmed: a refused upload-complete would show in the snapshot.
    uploadFile(
      org.workspaceKey,
      { bytes: png, filename: 'comment.png', contentType: 'image/png', resourceType: 'message_attachment', resourceId: markup.id },
      { confirm: false },
    ),
  ]);
  const installationBKeys = makeCustomerKeys();
  const [installation, deletedInstallation, installationB] = await Promise.all([
    createInstallation(org.workspaceKey, { allowedOrigins: [MATRIX_ORIGIN] }),
    createInstallation(org.workspaceKey),
    createInstallation(org.workspaceKey, { signingKey: installationBKeys.publicKeyPem }),
  ]);
  const sources = await makeSourceEndUsers({
    installationA: {
      installation,
      keys: { publicKeyPem: customerKeyPair().publicKey, privateKey: createPrivateKey(customerKeyPair().privateKey) },
    },
    installationB: { installation: installationB, keys: installationBKeys },
    markup,
  });
  const [webhook, deletedWebhook] = await Promise.all([
    createWebhookRegistration(org.workspaceKey),
    createWebhookRegistration(org.workspaceKey),
  ]);
  const webhookDelivery = await recordAttempt(webhook, Date.now() - 1000);
  const [externalUser, deletedExternalUser] = await Promise.all(
    ['matrix-guest', 'matrix-leaving'].map((externalId) => createExternalUser(workspace, externalId, {})),
  );
  const keys: Record<Exclude<Caller, EndUserCaller | SessionCaller>, string | null> = {
    none: null,
    badKey: BAD_KEY,
    otherOrganization: other.orgKey,
    otherWorkspace: otherWorkspaceKey.apiKey,
    ...(Object.fromEntries(MEMBER_ROLES.map((role, index) => [role, members[index]!.key])) as Record<
      (typeof MEMBER_ROLES)[number],
      string
    >),
    workspaceKey: org.workspaceKey,
    organizationKey: org.orgKey,
  };
  return {
    org,
    workspace,
    keys,
    /** The user each session caller signs in as. */
    sessionUsers,
    endUsers,
    markup,
    movedMarkup,
    deletedMarkup,
    bulkDeletedMarkup,
    elsewhereMarkup,
    mainFolder,
    archivedFolder,
    movedFolder,
    deletedFolder,
    thread,
    deletedThread,
    message: message.id as string,
    deletedMessage: deletedMessage.id as string,
    ownMessages,
    roleTarget,
    removedMember,
    asset,
    completed,
    commentUpload,
    png,
    installation,
    deletedInstallation,
    /** The end users of the workspace's sources, each with a thread and a message of its own on `markup`. */
    sources,
    webhook,
    deletedWebhook,
    /** An entry of `webhook`'s delivery log (redeliver). */
    webhookDelivery,
    signingKey: customerKeyPair().publicKey,
    /** A file id no refused upload policy may leave a record under. */
    refusedFileId: randomUUID(),
    externalUser: externalUser!,
    deletedExternalUser: deletedExternalUser!,
    /** The externalId POST /users/external creates; no refused call may. */
    newExternalId: `matrix-new-${randomUUID()}`,
  };
}

export type AuthorizationFixture = Awaited<ReturnType<typeof makeAuthorizationFixture>>;

interface Signer {
  installation: { id: string; publicKey: string };
  keys: CustomerKeys;
}

/**
 * One end user per source of the workspace, each made by its own exchange and holding a thread
 * with a reply on `markup`: the customer JWT exchange of installation A and of installation B, and
 * the SDK exchange (the identity provider's user, through A, which admits MATRIX_ORIGIN).
 * `tokenOf` exchanges again when the token held is within a minute of expiring; the claims are
 * the same each time, so a re-exchange writes nothing.
 */
async function makeSourceEndUsers(setup: { installationA: Signer; installationB: Signer; markup: MarkupRecord }) {
  const subs = Object.fromEntries(
    (Object.keys(SOURCE_CALLERS) as SourceCaller[]).map((caller) => [caller, `matrix-${caller}-${randomUUID()}`]),
  ) as Record<SourceCaller, string>;
  const jwtOf = (source: 'installationA' | 'installationB', sub: string, claims: Record<string, unknown> = {}) => {
    const { installation, keys } = setup[source];
    return customerJwt(keys, expectedClaimsOf(installation), { sub, ...claims });
  };
  const sdkBody = { publicKey: setup.installationA.installation.publicKey, markupId: setup.markup.id, sdkOrigin: MATRIX_ORIGIN };
  const exchangeAs = async (caller: SourceCaller): Promise<{ token: string; expiresAt: number; userId: string }> => {
    const source = SOURCE_CALLERS[caller];
    const claims = { sub: subs[caller], name: `Matrix ${caller}` };
    const response: ApiResponse =
      source === 'identityProvider'
        ? await sdkExchange(await idpToken(claims), sdkBody)
        : await call('POST', '/auth/exchange', { body: { token: await jwtOf(source, claims.sub, claims) } });
    if (response.status !== 200) throw new Error(`exchanging as ${caller}: ${response.status} ${JSON.stringify(response.body)}`);
    return {
      token: response.body.data.exchangeToken,
      expiresAt: Date.parse(response.body.data.expiresAt),
      userId: response.body.data.userId,
    };
  };
  const held = new Map<SourceCaller, { token: string; expiresAt: number }>();
  const users = {} as Record<SourceCaller, { externalId: string; userId: string; thread: string; message: string }>;
  for (const caller of Object.keys(SOURCE_CALLERS) as SourceCaller[]) {
    const exchanged = await exchangeAs(caller);
    held.set(caller, exchanged);
    const thread = await createThread(exchanged.token, setup.markup);
    const message = await reply(exchanged.token, thread.id, { content: `By ${caller}` });
    users[caller] = { externalId: subs[caller], userId: exchanged.userId, thread: thread.id as string, message: message.id as string };
  }
  return {
    users,
    /** A customer JWT of installation A or B for `sub` (a takeover attempt when `sub` is another source's). */
    jwtOf,
    async tokenOf(caller: SourceCaller): Promise<string> {
      const token = held.get(caller);
      if (token && token.expiresAt - Date.now() > 60_000) return token.token;
      const fresh = await exchangeAs(caller);
      held.set(caller, fresh);
      return fresh.token;
    },
  };
}

/** The credential `caller` sends: its key, or a freshly minted exchange token (they live minutes; the matrix runs longer). */
export async function credentialOf(fixture: AuthorizationFixture, caller: Caller): Promise<string | null> {
  if (isSourceCaller(caller)) return fixture.sources.tokenOf(caller);
  // A fresh session per call: a sign-out revokes the one it carries.
  if (isSessionCaller(caller)) return (await signSessionToken(await getExchangeSigner(), fixture.sessionUsers[caller])).token;
  return isEndUserCaller(caller) ? endUserToken(fixture.endUsers[caller]) : fixture.keys[caller];
}

/**
 * Attributes the webhook delivery worker writes in the background, whatever the call under test
 * did: a registration's `failingSince` (the 5-day rule), set when deliveries of events that earlier
 * allowed calls emitted fail against the fixture's loopback URL.
 */
const WORKER_STATE = new Set(['failingSince']);

/**
 * Every DynamoDB record reachable from the fixture, by key, as JSON: the organization's and the
 * workspace's partitions and lists (workspaces, keys, markups, retained originals), the folder
 * tree from the root and archive folders, each fixture markup's conversation partition with the
 * thread and message references, the fixture's uploads, the workspace's installations with
 * their publicKey claims, and its webhook registrations. A refused call must leave it unchanged.
 */
export async function snapshotOf(fixture: AuthorizationFixture): Promise<Map<string, string>> {
  const { org, workspace } = fixture;
  const records = new Map<string, string>();
  const add = (items: Record<string, unknown>[]) => {
    for (const item of items) {
      const kept = Object.keys(item)
        .filter((name) => !WORKER_STATE.has(name))
        .sort();
      records.set(`${String(item.PK)}|${String(item.SK)}`, JSON.stringify(item, kept));
    }
  };
  const fromIndex = async (index: Parameters<typeof queryAll>[0], partition: string) => {
    const items: Record<string, unknown>[] = [];
    for await (const item of queryAll(index, partition)) items.push(item);
    return items;
  };
  const walk = async (folderId: string): Promise<void> => {
    const children = await fromIndex('GSI1', `CHILDREN#${folderId}`);
    add(children);
    await Promise.all(children.filter((child) => child.kind === 'folder').map((child) => walk(child.id as string)));
  };
  const markups: MarkupRecord[] = [
    fixture.markup,
    fixture.movedMarkup,
    fixture.deletedMarkup,
    fixture.bulkDeletedMarkup,
    fixture.elsewhereMarkup,
  ];
  const single = (prefix: string, sortKey: string) => (id: string) => ({ PK: `${prefix}#${id}`, SK: sortKey });
  const singles = [
    ...[workspace.rootFolderId, workspace.archiveFolderId].map(single('ITEM', 'ITEM')),
    ...markups.map((markup) => markup.id).map(single('ORIGINAL', 'ORIGINAL')),
    ...[fixture.thread.id, fixture.deletedThread.id].map(single('THREAD', 'THREAD')),
    ...[fixture.message, fixture.deletedMessage, ...Object.values(fixture.ownMessages)].map(single('MESSAGE', 'MESSAGE')),
    ...[fixture.asset.fileId, fixture.completed.fileId, fixture.commentUpload.fileId, fixture.refusedFileId].map(
      single('UPLOAD', 'UPLOAD'),
    ),
    ...[fixture.installation.id, fixture.deletedInstallation.id].map(single('INSTALLATION', 'INSTALLATION')),
    ...[fixture.installation.publicKey, fixture.deletedInstallation.publicKey].map(
      single('INSTALLATION_PUBLIC_KEY', 'INSTALLATION_PUBLIC_KEY'),
    ),
    ...[fixture.webhook.id, fixture.deletedWebhook.id].map(single('WEBHOOK', 'WEBHOOK')),
    ...[fixture.externalUser.externalId, fixture.deletedExternalUser.externalId, fixture.newExternalId].map((externalId) =>
      externalUserKey(workspace.id, externalId),
    ),
    ...[fixture.externalUser.userId, fixture.deletedExternalUser.userId].map(single('USER', 'USER')),
    ...Object.values(fixture.sources.users).flatMap((user) => [
      externalUserKey(workspace.id, user.externalId),
      single('USER', 'USER')(user.userId),
      single('THREAD', 'THREAD')(user.thread),
      single('MESSAGE', 'MESSAGE')(user.message),
    ]),
  ];
  await Promise.all([
    queryPrefix(`ORG#${org.organizationId}`, undefined, { consistent: true }).then(add),
    queryPrefix(`WS#${workspace.id}`, undefined, { consistent: true }).then(add),
    fromIndex('GSI1', `ORG#${org.organizationId}#WORKSPACES`).then(add),
    fromIndex('GSI1', `ORG#${org.organizationId}#APIKEYS`).then(add),
    fromIndex('GSI4', `WS#${workspace.id}#MARKUPS`).then(add),
    fromIndex('GSI1', `WS#${workspace.id}#ORIGINALS#RETAINED`).then(add),
    fromIndex('GSI1', `WS#${workspace.id}#INSTALLATIONS`).then(add),
    fromIndex('GSI1', `WS#${workspace.id}#WEBHOOKS`).then(add),
    walk(workspace.rootFolderId),
    walk(workspace.archiveFolderId),
    batchGet(singles, { consistent: true }).then(add),
    ...markups.map((markup) => queryPrefix(`MARKUP#${markup.id}`, undefined, { consistent: true }).then(add)),
  ]);
  return records;
}

/**
 * What changed between two snapshots: keys added, removed or rewritten. Records that allowed calls
 * created (absent from `baseline`, the fixture as built) may still be rewritten by the workers
 * (thumbnails, conversions) while later calls run, so only their appearing or vanishing counts.
 */
export function differences(before: Map<string, string>, after: Map<string, string>, baseline: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys]
    .filter((key) => before.get(key) !== after.get(key))
    .filter((key) => baseline.has(key) || !before.has(key) || !after.has(key))
    .sort();
}
