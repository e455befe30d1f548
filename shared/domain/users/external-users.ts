import { randomUUID } from 'node:crypto';
import * as v from 'valibot';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import {
  API_SOURCE,
  deleteExternalUserRecord,
  displayNameOf,
  getExternalUser,
  insertExternalUser,
  installationSource,
  isInstallationSource,
  legacyExternalUsersOf,
  writeExternalUserChange,
  type ExternalUserRecord,
  type ExternalUserSource,
  type ExternalUserWrite,
} from '../../db/external-users.js';
import { soleInstallationIdOf } from '../../db/installations.js';
import { nextTime } from '../../db/core/transact.js';
import { getUpload } from '../../db/uploads.js';
import { BadRequestError, ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../../errors.js';
import { AvatarUrl, Email, ExternalId, ExternalUserName, type ExternalUserFields } from './external-user-fields.js';

/**
 * External users (Workspace users: /users/external; DESIGN "End users and external users"): made
 * ahead of time by the API, or on an end user's first token exchange, and kept in step with the
 * claims of later exchanges. Every write is conditional on the record as read, and retried from a
 * fresh read when another write got there first.
 */

export interface WorkspaceScope {
  id: string;
  organizationId: string;
}

/** The public shape (Resources: Users, external user fields); `id` is the user its threads and messages carry. */
export function toPublicExternalUser(record: ExternalUserRecord) {
  return {
    id: record.userId,
    externalId: record.externalId,
    name: record.name,
    email: record.email,
    avatarUrl: record.avatarUrl,
    avatarFileId: record.avatarFileId,
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
  };
}

const notFound = (externalId: string, workspace: WorkspaceScope) =>
  new NotFoundError(`No external user with externalId ${JSON.stringify(externalId)} in workspace ${workspace.id}.`);

/** How long writes keep retrying while other writes of the same external user get there first. */
const RETRY = { attempts: 10, baseMs: 10, capMs: 200 } as const;

/** Runs `write` (a read, then a write conditioned on it) again while it answers `AGAIN`, then 409. */
function fromFreshReadsOf<T>(externalId: string, write: () => Promise<T | typeof AGAIN>): Promise<T> {
  return withBackoff(write, {
    ...RETRY,
    exhausted: () => new ConflictError(`External user ${JSON.stringify(externalId)} is being changed by another request; try again.`),
  });
}

const isRetry = (outcome: ExternalUserWrite) => outcome === 'stale' || outcome === 'conflict';

/**
 * 400 unless `fileId` is a confirmed `external_user_avatar` upload made for this external user
 * (its `resourceId`); 403 when it was uploaded into another workspace. The upload is referenced,
 * not consumed: its resourceId already binds it to this one external user, it stays `confirmed`
 * (its bytes counted as an image of the workspace), and may be set again after being cleared.
 */
async function requireAvatarUpload(workspace: WorkspaceScope, externalId: string, fileId: string): Promise<void> {
  const upload = await getUpload(fileId);
  const refuse = (detail: string) => new InvalidInputError([{ field: 'avatarFileId', detail }]);
  if (!upload) throw refuse(`is not a known upload: ${fileId}`);
  if (upload.workspaceId !== workspace.id)
    throw new ForbiddenError(`Upload ${fileId} was made in another workspace than ${workspace.id}.`, 'upload-other-workspace');
  if (upload.resourceType !== 'external_user_avatar') throw refuse(`was uploaded as ${upload.resourceType}, not external_user_avatar`);
  if (upload.resourceId !== externalId) throw refuse(`was uploaded for external user ${JSON.stringify(upload.resourceId)}, not this one`);
  if (upload.state !== 'confirmed') throw refuse('was never confirmed: call upload-complete first');
}

/** A new external user of `source` with a new userId (fields not given are null). */
function newExternalUser(
  workspace: WorkspaceScope,
  externalId: string,
  fields: Partial<ExternalUserFields>,
  source: ExternalUserSource,
): ExternalUserRecord {
  const now = Date.now();
  return {
    workspaceId: workspace.id,
    organizationId: workspace.organizationId,
    externalId,
    source,
    userId: randomUUID(),
    name: fields.name ?? null,
    email: fields.email ?? null,
    avatarUrl: fields.avatarUrl ?? null,
    avatarFileId: fields.avatarFileId ?? null,
    createdAt: now,
    modifiedAt: now,
  };
}

/** POST /users/external: 409 when the workspace has this externalId already. */
export async function createExternalUser(
  workspace: WorkspaceScope,
  externalId: string,
  fields: Partial<ExternalUserFields>,
): Promise<ExternalUserRecord> {
  if (fields.avatarFileId) await requireAvatarUpload(workspace, externalId, fields.avatarFileId);
  const record = newExternalUser(workspace, externalId, fields, API_SOURCE);
  return withBackoff(
    async () => {
      const outcome = await insertExternalUser(record);
      if (outcome === 'written') return record;
      if (outcome === 'exists')
        throw new ConflictError(`An external user with externalId ${JSON.stringify(externalId)} exists in workspace ${workspace.id}.`);
      return AGAIN;
    },
    { ...RETRY, exhausted: () => new ConflictError('The external user is being created by another request; try again.') },
  );
}

export async function getExternalUserOf(workspace: WorkspaceScope, externalId: string): Promise<ExternalUserRecord> {
  const record = await getExternalUser(workspace.id, externalId);
  if (!record) throw notFound(externalId, workspace);
  return record;
}

/** `current` with `changes` applied (undefined: kept; null: cleared), or undefined when nothing changes. */
function changed(current: ExternalUserRecord, changes: Partial<ExternalUserFields>): ExternalUserRecord | undefined {
  const next = { ...current };
  let differs = false;
  for (const field of ['name', 'email', 'avatarUrl', 'avatarFileId'] as const) {
    const value = changes[field];
    if (value === undefined || value === current[field]) continue;
    next[field] = value;
    differs = true;
  }
  return differs ? { ...next, modifiedAt: nextTime(current.modifiedAt) } : undefined;
}

/** PATCH /users/external/:externalId: each field given is set (null clears it); the User's name follows. */
export async function updateExternalUser(
  workspace: WorkspaceScope,
  externalId: string,
  changes: Partial<ExternalUserFields>,
): Promise<ExternalUserRecord> {
  let checkedAvatar: string | undefined;
  return fromFreshReadsOf(externalId, async () => {
    const current = await getExternalUserOf(workspace, externalId);
    const next = changed(current, changes);
    if (!next) return current;
    if (next.avatarFileId && next.avatarFileId !== current.avatarFileId && next.avatarFileId !== checkedAvatar) {
      await requireAvatarUpload(workspace, externalId, next.avatarFileId);
      checkedAvatar = next.avatarFileId;
    }
    return isRetry(await writeExternalUserChange(current, next)) ? AGAIN : next;
  });
}

/** DELETE /users/external/:externalId: the record goes; its User stays as `Former user` (see `deleteExternalUserRecord`). */
export async function deleteExternalUser(workspace: WorkspaceScope, externalId: string): Promise<void> {
  await fromFreshReadsOf(externalId, async () => {
    const current = await getExternalUserOf(workspace, externalId);
    return isRetry(await deleteExternalUserRecord(current, nextTime(current.modifiedAt))) ? AGAIN : undefined;
  });
}

// ---------------------------------------------------------------------------------------------
// Token exchange
// ---------------------------------------------------------------------------------------------

/** Claims of a customer JWT that describe its user (DESIGN "End users and external users"). */
export interface UserClaims {
  name?: string;
  email?: string;
  picture?: string;
}

/**
 * The fields the claims carry, each only when it is what the API would accept for that field
 * (`picture` is the `avatarUrl`). A claim that is not (a non-string, an http picture, a 300-character
 * name) is left out rather than failing the exchange: the token is valid, only that detail is not.
 */
export function fieldsFromClaims(claims: UserClaims): Partial<ExternalUserFields> {
  const fields: Partial<ExternalUserFields> = {};
  const take = <S extends v.GenericSchema<unknown, string>>(schema: S, value: unknown) => {
    const parsed = v.safeParse(schema, value);
    return parsed.success ? parsed.output : undefined;
  };
  const name = take(ExternalUserName, claims.name);
  const email = take(Email, claims.email);
  const avatarUrl = take(AvatarUrl, claims.picture);
  if (name !== undefined) fields.name = name;
  if (email !== undefined) fields.email = email;
  if (avatarUrl !== undefined) fields.avatarUrl = avatarUrl;
  return fields;
}

/**
 * What an exchange may do with `current` for `source`: act as it, bind it first, or nothing. An
 * API-made user is bound by the first installation. A legacy one (no `source`: its maker is not
 * known, perhaps another installation) is bound only by the workspace's sole installation; with
 * two or more it waits for an operator (`admin users assign-source`), and the identity provider
 * never binds one.
 */
async function claimOf(current: ExternalUserRecord, source: ExternalUserSource, workspaceId: string): Promise<'own' | 'bind' | 'other'> {
  if (current.source === source) return 'own';
  if (!isInstallationSource(source)) return 'other';
  if (current.source === API_SOURCE) return 'bind';
  if (current.source !== undefined) return 'other';
  const sole = await soleInstallationIdOf(workspaceId);
  return sole !== undefined && installationSource(sole) === source ? 'bind' : 'other';
}

/** 403 for an exchange whose `sub` names another source's end user; it names neither that source nor the user's details. */
const otherSource = (externalId: string) =>
  new ForbiddenError(
    `The sub ${JSON.stringify(externalId)} names an end user of another source of this workspace (another installation, the identity provider, the API after another installation's first exchange, or an end user from before sources were recorded that an operator has not yet assigned): an exchange acts only as its own source's end users, so nothing was changed and no token minted.`,
    'end-user-of-another-source',
  );

/**
 * The external user of `externalId` (the JWT's `sub`) in the workspace, as the exchanges need it,
 * for `source` (the installation whose JWT it is, or the identity provider): created with its User
 * when absent, otherwise updated with only the fields the claims carry, and not written at all when
 * they change nothing, so a steady stream of exchanges costs one read. Concurrent first exchanges
 * of the same `sub` end with one external user and one userId (the creation is conditional; the
 * losers read the winner's record and apply their claims to it, or are refused).
 *
 * End users belong to their source (DESIGN.md "Trust rules"): a record of another source is a 403
 * before anything is written; an API-made one is bound to the first installation that exchanges
 * it, a legacy one only to the workspace's sole installation (`claimOf`), by a write conditioned on
 * its source as read, so of two installations racing for it exactly one wins and the other,
 * reading again, is refused.
 * 400 when `externalId` is empty, longer than 255 characters, not printable text, or `.`/`..`.
 */
export async function upsertExternalUserFromClaims(
  workspace: { id: string; organizationId: string },
  externalId: string,
  claims: { name?: string; email?: string; picture?: string },
  source: ExternalUserSource,
): Promise<{ userId: string; name: string }> {
  if (!v.is(ExternalId, externalId))
    throw new BadRequestError(
      "The token's sub claim must be 1 to 255 characters of printable text, not . or ..: it is the external user's id.",
      'invalid-sub-claim',
    );
  const fields = fieldsFromClaims(claims);
  const record = await fromFreshReadsOf(externalId, async () => {
    const current = await getExternalUser(workspace.id, externalId);
    if (!current) {
      const created = newExternalUser(workspace, externalId, fields, source);
      const outcome = await insertExternalUser(created);
      return outcome === 'written' ? created : AGAIN;
    }
    const claim = await claimOf(current, source, workspace.id);
    if (claim === 'other') throw otherSource(externalId);
    const next =
      claim === 'bind'
        ? { ...(changed(current, fields) ?? current), source, modifiedAt: nextTime(current.modifiedAt) }
        : changed(current, fields);
    if (!next) return current;
    return isRetry(await writeExternalUserChange(current, next)) ? AGAIN : next;
  });
  return { userId: record.userId, name: displayNameOf(record) };
}

/**
 * `admin users assign-source`: gives the legacy external users of a workspace (no `source`,
 * written before sources were recorded), or the one of `externalId`, the source `source`. Each
 * write is conditioned on the record still being legacy and as read, so it is safe beside
 * exchanges (a record an exchange bound meanwhile keeps that binding) and idempotent: a second run
 * finds nothing to assign. Answers the externalIds assigned, and those that already had a source.
 */
export async function assignLegacyExternalUsers(
  workspace: WorkspaceScope,
  source: ExternalUserSource,
  externalId?: string,
): Promise<{ assigned: string[]; alreadySourced: string[] }> {
  const candidates =
    externalId === undefined ? await legacyExternalUsersOf(workspace.id) : [await getExternalUserOf(workspace, externalId)];
  const assigned: string[] = [];
  const alreadySourced: string[] = [];
  for (const candidate of candidates) {
    const outcome = await fromFreshReadsOf(candidate.externalId, async () => {
      const current = await getExternalUser(workspace.id, candidate.externalId);
      if (!current) return 'gone' as const;
      if (current.source !== undefined) return 'sourced' as const;
      return isRetry(await writeExternalUserChange(current, { ...current, source, modifiedAt: nextTime(current.modifiedAt) }))
        ? AGAIN
        : ('assigned' as const);
    });
    if (outcome === 'assigned') assigned.push(candidate.externalId);
    if (outcome === 'sourced') alreadySourced.push(candidate.externalId);
  }
  return { assigned, alreadySourced };
}
