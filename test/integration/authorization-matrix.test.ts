import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.js';
import { allows, ruleOf, type AnyRole, type Permission } from '../../shared/auth/permissions.js';
import { RESOURCE_RULES } from '../../shared/domain/uploads/rules.js';
import { VIEW_MODES } from '../../shared/domain/markups/view-modes.js';
import { routeKey } from '../../shared/http/route.js';
import { call, type ApiResponse } from '../support/api.js';
import {
  CALLERS,
  credentialOf,
  differences,
  END_USER_CALLERS,
  isEndUserCaller,
  isSessionCaller,
  isSourceCaller,
  makeAuthorizationFixture,
  MATRIX_ORIGIN,
  memberRoleOf,
  snapshotOf,
  SOURCE_CALLERS,
  VICTIM_OF,
  type AuthorizationFixture,
  type Caller,
  type SourceCaller,
} from '../support/authorization.js';
import { idpToken, newState, sdkExchange, sdkResult } from '../support/sdk.js';
import { askSignIn, issueSignInCode, newSourceIp, verifySignIn } from '../support/sign-in.js';
import { threadBody } from '../support/threads.js';
import { fileForm, postFileMarkup } from '../support/uploads.js';
import { LOOPBACK_HOOK_URL } from '../support/webhooks.js';

/**
 * Issue 18: every route x every kind of caller, generated from the route tables and the permission
 * table. Each route needs a case below that says how to call it on the fixture; a route without
 * one fails, so a new route cannot skip the matrix. Issue 11: end users (exchange tokens) are
 * callers too, checked against the table's `endUser` columns; routes closed to them answer 403.
 * Issue 28: the end users of the workspace's three sources (installations A and B, the identity
 * provider) act on another source's end user's threads and messages (`VICTIM_OF`), and the
 * exchanges are tried with the `sub` of theirs from another source: zero cross-source actions.
 */
interface Case {
  send(f: AuthorizationFixture, key: string | null, caller: Caller): Promise<ApiResponse | { status: number; body: any }>;
  /** A permission the call needs beside the route's (an upload's resource type, which may differ per caller). */
  also?: Permission | ((caller: Caller) => Permission);
  /** The call acts on another person's record (own-versus-others rules), for every caller or for some. */
  others?: true | ((caller: Caller) => boolean);
  /** Keys outside the fixture act on their own workspace here, so nothing stops them. */
  outsidersActOnTheirOwn?: true;
  /** Destructive calls go last (2: the workspace itself, very last), one allowed caller after another. */
  order?: 1 | 2;
  /** The first allowed call removes the target: later allowed callers may find it gone (401 for a key of a deleted workspace, 404). */
  consumesTarget?: true;
  /**
   * Only member keys and members' sessions (a verified email) may, with the role the permission needs: plain and organization keys are
   * refused.
   */
  memberKeyOnly?: true;
  /** Only a session token may (signing out), whatever its role: keys and exchange tokens are refused. */
  sessionOnly?: true;
  /** Any live credential may, whatever its kind, role or workspace (a live-update ticket: its subscriptions are authorized one by one). */
  anyCredential?: true;
  /**
   * Made by a source's end user, the call acts on or as another source's end user (DESIGN.md "Trust
   * rules": end users belong to the source that made them), so it is refused (403) whatever the
   * permission table says, and changes nothing.
   */
  crossSource?: true | ((caller: SourceCaller) => boolean);
}

const ws = (f: AuthorizationFixture) => ({ workspaceId: f.org.workspaceId });
const pin = { viewportXPercentage: 10, viewportYPercentage: 20 };
const get = (path: (f: AuthorizationFixture) => string, query?: (f: AuthorizationFixture) => Record<string, string>): Case => ({
  send: (f, key) => call('GET', path(f), { key, query: query?.(f) }),
});
const send = (
  method: string,
  path: (f: AuthorizationFixture) => string,
  body?: (f: AuthorizationFixture, caller: Caller) => unknown,
  extra: Omit<Case, 'send'> = {},
): Case => ({
  send: (f, key, caller) => call(method, path(f), { key, body: body?.(f, caller) }),
  ...extra,
});
/** Callers refused whatever they are allowed elsewhere; calls that may write give them `refusedFileId`. */
const OUTSIDERS: readonly Caller[] = ['none', 'badKey', 'otherOrganization', 'otherWorkspace', 'endBoundElsewhere', 'endOtherWorkspace'];
const refusedFileId = (f: AuthorizationFixture, caller: Caller, refused: readonly Caller[]) =>
  [...OUTSIDERS, ...refused].includes(caller) ? { fileId: f.refusedFileId } : {};
// End users upload for comments (a markup), everyone else markup files (a folder).
const policyBody = (f: AuthorizationFixture, caller: Caller) => ({
  ...(isEndUserCaller(caller)
    ? { resourceType: 'message_attachment', resourceId: f.markup.id }
    : { resourceType: 'markup_asset', resourceId: f.mainFolder.id }),
  filename: 'a.png',
  contentType: 'image/png',
  filesize: f.png.length,
  ...refusedFileId(f, caller, ['viewer', 'endViewer']),
});
const policyPermission = (caller: Caller) => RESOURCE_RULES[isEndUserCaller(caller) ? 'message_attachment' : 'markup_asset'].permission;
/** The thread a caller acts on: `fallback` (the workspace key's), or for a source's end user another source's end user's. */
const threadFor = (f: AuthorizationFixture, caller: Caller, fallback: { id: string } = f.thread) =>
  isSourceCaller(caller) ? f.sources.users[VICTIM_OF[caller]].thread : fallback.id;
/** The same for messages. */
const messageFor = (f: AuthorizationFixture, caller: Caller, fallback: string) =>
  isSourceCaller(caller) ? f.sources.users[VICTIM_OF[caller]].message : fallback;
/** A thread route on `threadFor`'s thread: every caller acts on someone else's, a source's end user on another source's. */
const onThread = (method: string, suffix: string, body?: (f: AuthorizationFixture) => unknown): Case => ({
  send: (f, key, caller) => call(method, `/threads/${threadFor(f, caller)}${suffix}`, { key, body: body?.(f) }),
  others: true,
  crossSource: true,
});
const completeBody = (f: AuthorizationFixture, caller: Caller) => {
  const upload = isEndUserCaller(caller) ? f.commentUpload : f.completed;
  return { fileId: upload.fileId, etag: upload.etag };
};

const CASES: Record<string, Case> = {
  'GET /api/v2/workspace': get(() => '/workspace', ws),
  'GET /api/v2/workspaces': { ...get(() => '/workspaces'), outsidersActOnTheirOwn: true },
  'POST /api/v2/workspace': {
    ...send(
      'POST',
      () => '/workspace',
      () => ({ name: 'Matrix extra' }),
    ),
    outsidersActOnTheirOwn: true,
  },
  'PATCH /api/v2/workspace': send(
    'PATCH',
    () => '/workspace',
    (f) => ({ name: 'Matrix', ...ws(f) }),
  ),
  'DELETE /api/v2/workspace': { ...send('DELETE', () => '/workspace', ws), order: 2, consumesTarget: true },
  'GET /api/v2/workspace/settings': get(() => '/workspace/settings', ws),
  'PATCH /api/v2/workspace/settings': send(
    'PATCH',
    () => '/workspace/settings',
    (f) => ({ originalFileStoragePolicy: 'STORE_ALWAYS', ...ws(f) }),
  ),
  'POST /api/v2/workspace/originals/archive-all': {
    send: (f, key) => call('POST', '/workspace/originals/archive-all', { key, query: ws(f) }),
  },
  'GET /api/v2/workspace/storage-breakdown': get(() => '/workspace/storage-breakdown', ws),
  'GET /api/v2/items/{id}': get((f) => `/items/${f.mainFolder.id}`),
  'GET /api/v2/items/{id}/items': get((f) => `/items/${f.mainFolder.id}/items`),
  'POST /api/v2/items': send(
    'POST',
    () => '/items',
    (f) => ({ parentFolderId: f.mainFolder.id, name: 'Matrix folder' }),
  ),
  'PATCH /api/v2/items/archive': send(
    'PATCH',
    () => '/items/archive',
    (f) => ({ folderItemIds: [f.archivedFolder.id] }),
  ),
  'PATCH /api/v2/items/restore': send(
    'PATCH',
    () => '/items/restore',
    (f) => ({ folderItemIds: [f.archivedFolder.id] }),
  ),
  'PATCH /api/v2/items/move': send(
    'PATCH',
    () => '/items/move',
    (f) => ({ parentFolderId: f.mainFolder.id, items: [{ id: f.movedFolder.id }] }),
  ),
  'PATCH /api/v2/items/{id}/move': send(
    'PATCH',
    (f) => `/items/${f.movedFolder.id}/move`,
    (f) => ({ parentFolderId: f.workspace.rootFolderId }),
  ),
  'PATCH /api/v2/items/{id}': send(
    'PATCH',
    (f) => `/items/${f.mainFolder.id}`,
    (f) => ({ name: f.mainFolder.name }),
  ),
  'DELETE /api/v2/items/{id}': { ...send('DELETE', (f) => `/items/${f.deletedFolder.id}`), order: 1 },
  'POST /api/v2/markups/url': send(
    'POST',
    () => '/markups/url',
    (f) => ({ url: 'https://example.com/', ...ws(f) }),
  ),
  'POST /api/v2/markups/from-files': send(
    'POST',
    () => '/markups/from-files',
    (f) => ({ fileIds: [f.asset.fileId], ...ws(f) }),
  ),
  'POST /api/v2/markups/file': { send: (f, key) => postFileMarkup(key!, fileForm(f.png, 'a.png', 'image/png'), ws(f)) },
  'GET /api/v2/markups': get(() => '/markups', ws),
  'GET /api/v2/markups/search': get(
    () => '/markups/search',
    (f) => ({ ...ws(f), query: 'x' }),
  ),
  'GET /api/v2/markups/usage': get(() => '/markups/usage', ws),
  'GET /api/v2/markups/{id}': get((f) => `/markups/${f.markup.id}`),
  'POST /api/v2/markups/{id}': send(
    'POST',
    (f) => `/markups/${f.markup.id}`,
    () => ({ name: 'Matrix markup' }),
  ),
  'DELETE /api/v2/markups/{id}': { ...send('DELETE', (f) => `/markups/${f.deletedMarkup.id}`), order: 1 },
  'PATCH /api/v2/markups/{id}/read-only': send(
    'PATCH',
    (f) => `/markups/${f.markup.id}/read-only`,
    () => ({ readOnly: false }),
  ),
  'GET /api/v2/markups/{id}/events': get((f) => `/markups/${f.markup.id}/events`),
  'GET /api/v2/markups/{id}/tag': get((f) => `/markups/${f.markup.id}/tag`),
  'GET /api/v2/markups/{id}/view-modes': get((f) => `/markups/${f.markup.id}/view-modes`),
  'GET /api/v2/markups/{id}/thumbnail': get((f) => `/markups/${f.markup.id}/thumbnail`),
  'GET /api/v2/markups/{id}/page-screenshots/{viewModeId}/layout': get(
    (f) => `/markups/${f.markup.id}/page-screenshots/${VIEW_MODES[0]!.id}/layout`,
  ),
  'GET /api/v2/markups/{id}/original/download-url': get((f) => `/markups/${f.markup.id}/original/download-url`),
  'PATCH /api/v2/markups/{id}/original': send(
    'PATCH',
    (f) => `/markups/${f.markup.id}/original`,
    () => ({ retainOriginal: true }),
  ),
  'DELETE /api/v2/markups/{id}/original': send('DELETE', (f) => `/markups/${f.markup.id}/original`),
  'POST /api/v2/markups/bulk/from-url': send(
    'POST',
    () => '/markups/bulk/from-url',
    (f) => ({ items: [{ url: 'https://example.com/', ...ws(f) }] }),
  ),
  'POST /api/v2/markups/bulk/move': send(
    'POST',
    () => '/markups/bulk/move',
    (f) => ({ markupIds: [f.movedMarkup.id], targetFolderId: f.mainFolder.id }),
  ),
  'POST /api/v2/markups/bulk/delete': {
    ...send(
      'POST',
      () => '/markups/bulk/delete',
      (f) => ({ markupIds: [f.bulkDeletedMarkup.id] }),
    ),
    order: 1,
  },
  // A session names the workspace (it has none of its own: 400 without).
  'POST /api/v2/markups/bulk/from-files': {
    ...send(
      'POST',
      () => '/markups/bulk/from-files',
      (f, caller) => (isSessionCaller(caller) ? ws(f) : {}),
    ),
    outsidersActOnTheirOwn: true,
  },
  'GET /api/v2/threads': get(
    () => '/threads',
    (f) => ({ markupId: f.markup.id }),
  ),
  'POST /api/v2/threads': send(
    'POST',
    () => '/threads',
    (f) => threadBody(f.markup),
  ),
  'GET /api/v2/threads/{id}': get((f) => `/threads/${f.thread.id}`),
  // The fixture's thread is the workspace key's: every caller acts on someone else's (a source's end user on another source's).
  'POST /api/v2/threads/{id}/resolve': onThread('POST', '/resolve'),
  'POST /api/v2/threads/{id}/unresolve': onThread('POST', '/unresolve'),
  'POST /api/v2/threads/{id}/read': send('POST', (f) => `/threads/${f.thread.id}/read`),
  'DELETE /api/v2/threads/{id}': {
    send: (f, key, caller) => call('DELETE', `/threads/${threadFor(f, caller, f.deletedThread)}`, { key }),
    others: true,
    crossSource: true,
    order: 1,
  },
  'PATCH /api/v2/threads/{id}/move-pin': onThread('PATCH', '/move-pin', () => pin),
  'GET /api/v2/threads/{id}/screenshot-upload-policy': {
    send: (f, key, caller) =>
      call('GET', `/threads/${threadFor(f, caller)}/screenshot-upload-policy`, {
        key,
        query: {
          filename: 's.png',
          mimeType: 'image/png',
          filesize: String(f.png.length),
          ...refusedFileId(f, caller, ['viewer', 'endViewer', 'endContributor', ...(Object.keys(SOURCE_CALLERS) as SourceCaller[])]),
        },
      }),
    others: true,
    crossSource: true,
  },
  'PUT /api/v2/threads/{id}/screenshot': onThread('PUT', '/screenshot', (f) => ({
    fileId: f.refusedFileId,
    key: 'screenshots/none.png',
    etag: '"0"',
    mimeType: 'image/png',
    width: 4,
    height: 3,
    filesize: f.png.length,
  })),
  'GET /api/v2/threads/{id}/screenshot': get((f) => `/threads/${f.thread.id}/screenshot`),
  'POST /api/v2/threads/{id}/messages': send(
    'POST',
    (f) => `/threads/${f.thread.id}/messages`,
    () => ({ content: 'Matrix reply' }),
  ),
  'GET /api/v2/messages/{id}': get((f) => `/messages/${f.message}`),
  // Each member and end user that may write edits its own message; the organization key edits the workspace key's, someone
  // else's, and a source's end user another source's end user's.
  'PATCH /api/v2/messages/{id}': {
    send: (f, key, caller) =>
      call('PATCH', `/messages/${messageFor(f, caller, f.ownMessages[memberRoleOf(caller) ?? caller] ?? f.message)}`, {
        key,
        body: { content: 'Edited' },
      }),
    others: (caller) => caller === 'organizationKey' || isSourceCaller(caller),
    crossSource: true,
  },
  'POST /api/v2/messages/{id}/read': send('POST', (f) => `/messages/${f.message}/read`),
  'DELETE /api/v2/messages/{id}': {
    send: (f, key, caller) => call('DELETE', `/messages/${messageFor(f, caller, f.deletedMessage)}`, { key }),
    others: true,
    crossSource: true,
    order: 1,
  },
  'POST /api/v2/uploads/upload-policy': { ...send('POST', () => '/uploads/upload-policy', policyBody), also: policyPermission },
  'POST /api/v2/upload-policy': { ...send('POST', () => '/upload-policy', policyBody), also: policyPermission },
  'POST /api/v2/uploads/upload-complete': send('POST', () => '/uploads/upload-complete', completeBody),
  'POST /api/v2/upload-complete': send('POST', () => '/upload-complete', completeBody),
  'POST /api/v2/installations': send(
    'POST',
    () => '/installations',
    (f) => ({ signingKey: f.signingKey, ...ws(f) }),
  ),
  'GET /api/v2/installations': get(() => '/installations', ws),
  'GET /api/v2/installations/{id}': get((f) => `/installations/${f.installation.id}`),
  'DELETE /api/v2/installations/{id}': { ...send('DELETE', (f) => `/installations/${f.deletedInstallation.id}`), order: 1 },
  'POST /api/v2/webhook-registrations': send(
    'POST',
    () => '/webhook-registrations',
    (f) => ({ url: LOOPBACK_HOOK_URL, ...ws(f) }),
  ),
  'GET /api/v2/webhook-registrations': get(() => '/webhook-registrations', ws),
  'GET /api/v2/webhook-registrations/{id}': get((f) => `/webhook-registrations/${f.webhook.id}`),
  'POST /api/v2/webhook-registrations/{id}': send(
    'POST',
    (f) => `/webhook-registrations/${f.webhook.id}`,
    () => ({ enabled: true }),
  ),
  'POST /api/v2/webhook-registrations/{id}/refresh-signing-key': send(
    'POST',
    (f) => `/webhook-registrations/${f.webhook.id}/refresh-signing-key`,
  ),
  'DELETE /api/v2/webhook-registrations/{id}': { ...send('DELETE', (f) => `/webhook-registrations/${f.deletedWebhook.id}`), order: 1 },
  'GET /api/v2/webhook-registrations/{id}/deliveries': get((f) => `/webhook-registrations/${f.webhook.id}/deliveries`),
  'POST /api/v2/webhook-registrations/{id}/deliveries/{deliveryId}/redeliver': send(
    'POST',
    (f) => `/webhook-registrations/${f.webhook.id}/deliveries/${f.webhookDelivery.id}/redeliver`,
  ),
  'POST /api/v2/webhook-registrations/{id}/test': send('POST', (f) => `/webhook-registrations/${f.webhook.id}/test`),
  'POST /api/v2/users/external': send(
    'POST',
    () => '/users/external',
    (f) => ({ externalId: f.newExternalId, name: 'Matrix guest', ...ws(f) }),
  ),
  'GET /api/v2/users/external/{externalId}': get((f) => `/users/external/${f.externalUser.externalId}`, ws),
  'PATCH /api/v2/users/external/{externalId}': send(
    'PATCH',
    (f) => `/users/external/${f.externalUser.externalId}`,
    (f) => ({ name: 'Matrix renamed', ...ws(f) }),
  ),
  'DELETE /api/v2/users/external/{externalId}': {
    send: (f, key) => call('DELETE', `/users/external/${f.deletedExternalUser.externalId}`, { key, query: ws(f) }),
    order: 1,
  },
  'GET /api/v2/openapi.json': get(() => '/openapi.json'),
  'GET /api/v2/docs': get(() => '/docs'),
  'GET /api/v2/docs/api-reference.js': get(() => '/docs/api-reference.js'),
  'GET /api/v2/auth/config': get((f) => `/auth/config?publicKey=${f.installation.publicKey}`),
  // No credential: the customer JWT is one, so every caller's Authorization header is beside the point. A source's end
  // user is the target instead: another source tries to take it over (installation B or A, with the profile claims of an
  // impostor), which is refused and overwrites nothing.
  'POST /api/v2/auth/exchange': {
    send: async (f, key, caller) =>
      call('POST', '/auth/exchange', {
        key,
        body: { token: isSourceCaller(caller) ? await takeoverJwt(f, caller) : await f.sources.jwtOf('installationA', 'matrix-end-user') },
      }),
    crossSource: true,
  },
  // The identity-provider token is the credential (the caller's key is beside the point), and the
  // result needs none: the state of an exchange just made, from the origin it was made for. An
  // installation's end user is the target instead: the identity provider's user of the same sub.
  'POST /api/v2/auth/sdk-exchange': {
    send: async (f, _key, caller) =>
      sdkExchange(
        await idpToken(isSourceCaller(caller) && caller !== 'endSdk' ? { sub: f.sources.users[caller].externalId, ...IMPOSTOR } : {}),
        sdkBody(f),
      ),
    crossSource: (caller) => caller !== 'endSdk',
  },
  'GET /api/v2/auth/sdk-exchange/result': {
    send: async (f) => {
      const state = newState();
      await sdkExchange(await idpToken(), { ...sdkBody(f), state });
      return sdkResult({ state, publicKey: f.installation.publicKey, markupId: f.markup.id }, MATRIX_ORIGIN);
    },
  },
  'GET /api/v2/users': get(() => '/users', ws),
  'POST /api/v2/users/invite': {
    send: (f, key, caller) =>
      call('POST', '/users/invite', { key, query: ws(f), body: { emails: [`matrix-${caller}-${randomUUID().slice(0, 8)}@example.com`] } }),
    memberKeyOnly: true,
  },
  'PATCH /api/v2/users/{userId}/role': {
    send: (f, key) => call('PATCH', `/users/${f.roleTarget.userId}/role`, { key, query: ws(f), body: { role: 'contributor' } }),
  },
  'DELETE /api/v2/users/{userId}': {
    send: (f, key) => call('DELETE', `/users/${f.removedMember.userId}`, { key, query: ws(f) }),
    order: 1,
    consumesTarget: true,
  },
  // Issue 30: no credential; every caller asks for a link for an address of its own (202 whoever asks, never 401 or 403).
  'POST /api/v2/auth/email-sign-in': {
    send: (_f, key, caller) => askSignIn(newSourceIp(), `matrix-${caller}-${randomUUID().slice(0, 8)}@example.com`, key),
  },
  // The code is the credential: each caller verifies a code just issued to the fixture's viewer.
  'POST /api/v2/auth/email-sign-in/verify': {
    send: async (f, key) => verifySignIn(newSourceIp(), await issueSignInCode(f.sessionUsers.sessionViewer), key),
  },
  'POST /api/v2/auth/sign-out': { ...send('POST', () => '/auth/sign-out'), sessionOnly: true },
  'GET /api/v2/auth/session': { ...get(() => '/auth/session'), sessionOnly: true },
  'POST /api/v2/live/tickets': { ...send('POST', () => '/live/tickets'), anyCredential: true },
};

/** An SDK exchange of the fixture's installation (which admits MATRIX_ORIGIN) for its markup. */
const sdkBody = (f: AuthorizationFixture) => ({ publicKey: f.installation.publicKey, markupId: f.markup.id, sdkOrigin: MATRIX_ORIGIN });

/** Profile claims that would show in the snapshot if an exchange wrote them. */
const IMPOSTOR = { name: 'Impostor', email: 'impostor@example.com', picture: 'https://cdn.example.com/impostor.png' };

/** A customer JWT naming `caller`'s end user, signed by an installation that did not make it (B for A's, A for B's and the SDK's). */
function takeoverJwt(f: AuthorizationFixture, caller: SourceCaller): Promise<string> {
  return f.sources.jwtOf(caller === 'endInstallationA' ? 'installationB' : 'installationA', f.sources.users[caller].externalId, IMPOSTOR);
}

/** Whether the permission table, and the rule that end users belong to their source, let `caller` make this call. */
function isAllowed(caller: Caller, permission: Permission | undefined, testCase: Case): boolean {
  if (isSourceCaller(caller) && (typeof testCase.crossSource === 'function' ? testCase.crossSource(caller) : testCase.crossSource === true))
    return false;
  if (permission === undefined) return true;
  if (caller === 'none' || caller === 'badKey') return false;
  if (testCase.memberKeyOnly && memberRoleOf(caller) === undefined) return false;
  if (testCase.sessionOnly) return isSessionCaller(caller);
  if (testCase.anyCredential) return true;
  // A session reaches only its memberships: the outsider is a member of another workspace, named nowhere here.
  if (caller === 'sessionOutsider') return false;
  const also = typeof testCase.also === 'function' ? testCase.also(caller) : testCase.also;
  const needed = [permission, ...(also ? [also] : [])];
  if (needed.some((each) => ruleOf(each).organizationKey)) return caller === 'organizationKey' || caller === 'otherOrganization';
  if (caller === 'otherOrganization' || caller === 'otherWorkspace') return testCase.outsidersActOnTheirOwn === true;
  // Every route open to end users acts on a fixture markup, which these tokens never reach.
  if (caller === 'endBoundElsewhere' || caller === 'endOtherWorkspace') return false;
  // Plain keys act as owners; member keys with their role; end users with their markup role.
  const memberRole = memberRoleOf(caller) ?? 'owner';
  const role: AnyRole = isEndUserCaller(caller) ? END_USER_CALLERS[caller] : memberRole;
  const others = typeof testCase.others === 'function' ? testCase.others(caller) : testCase.others === true;
  return needed.every((each) => allows(role, each, others ? 'others' : 'own'));
}

const routes = allRoutes()
  .map((route) => ({ route, key: routeKey(route), testCase: CASES[routeKey(route)] }))
  .sort((a, b) => (a.testCase?.order ?? 0) - (b.testCase?.order ?? 0));

describe('authorization matrix: every route x every caller (issue 18 item 1, issue 11 item 4: the permission table; issue 28: no cross-source action)', () => {
  let fixture: AuthorizationFixture;
  let baseline: Map<string, string>;
  beforeAll(async () => {
    fixture = await makeAuthorizationFixture();
    baseline = await snapshotOf(fixture);
  }, 120_000);

  it('has a case for every route and a route for every case', () => {
    expect(routes.filter((entry) => !entry.testCase).map((entry) => entry.key)).toEqual([]);
    expect(Object.keys(CASES).sort()).toEqual(routes.map((entry) => entry.key).sort());
  });

  it.each(routes.map((entry) => [entry.key, entry] as const))(
    '%s',
    async (_key, { route, testCase }) => {
      if (!testCase) throw new Error('no case');
      const expected = CALLERS.map((caller) => ({ caller, allowed: isAllowed(caller, route.permission, testCase) }));
      const refused = expected.filter((entry) => !entry.allowed).map((entry) => entry.caller);

      const before = await snapshotOf(fixture);
      const refusals = await Promise.all(
        refused.map(async (caller) => ({ caller, response: await testCase.send(fixture, await credentialOf(fixture, caller), caller) })),
      );
      const after = await snapshotOf(fixture);
      const allowedCallers = expected.filter((entry) => entry.allowed).map((entry) => entry.caller);
      const callOnce = async (caller: Caller) => ({
        caller,
        ...(await testCase.send(fixture, await credentialOf(fixture, caller), caller)),
      });
      // Destructive calls one after another (each may find the target gone); the rest at once.
      const allowed = [];
      if (testCase.order) for (const caller of allowedCallers) allowed.push(await callOnce(caller));
      else allowed.push(...(await Promise.all(allowedCallers.map(callOnce))));

      for (const { caller, response } of refusals) {
        const status = caller === 'none' || caller === 'badKey' ? 401 : 403;
        expect(response.status, `${caller}: ${JSON.stringify(response.body)}`).toBe(status);
      }
      expect(differences(before, after, baseline), 'records written by refused calls').toEqual([]);
      for (const [index, { caller, status, body }] of allowed.entries()) {
        const refusedAs = testCase.consumesTarget && index > 0 ? [403] : [401, 403];
        expect(refusedAs, `${caller}: ${JSON.stringify(body)}`).not.toContain(status);
        expect(status < 500 || status === 501, `${caller}: ${status} ${JSON.stringify(body)}`).toBe(true);
      }
      if (testCase.consumesTarget) expect(allowed[0]?.status, JSON.stringify(allowed[0]?.body)).toBeLessThan(300);
      // Destructive routes call some twenty callers one after another: on a loaded 2-core machine one
      // took over vitest's 30 s, and its calls, still running, then wrote into the next route's check.
    },
    120_000,
  );
});
