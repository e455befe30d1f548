import { randomBytes, randomUUID } from 'node:crypto';
import { mintExchangeToken } from '../../shared/auth/exchange-tokens.js';
import type { EndUserRole } from '../../shared/auth/permissions.js';
import { getExternalUser, insertExternalUser } from '../../shared/db/external-users.js';
import { insertInstallation } from '../../shared/db/installations.js';
import { localStack } from './api.js';
import { customerKeyPair } from './installations.js';

/** Who an end user is and what its token reaches: a workspace, a role and, optionally, one markup. */
export interface EndUserSpec {
  organizationId: string;
  workspaceId: string;
  /** Default `project:contributor`, as the exchange's default role. */
  markupRole?: EndUserRole;
  /** Binds the token to this markup. */
  markupId?: string;
  /** The end user's user id (its authorship and read state); default a fresh one. */
  userId?: string;
  externalId?: string;
  installationId?: string;
}

export interface EndUser {
  token: string;
  userId: string;
  externalId: string;
  expiresAt: Date;
}

/** What `makeEndUser` made for a spec: the records its tokens stand for (they die with them). */
const provisioned = new WeakMap<EndUserSpec, Promise<{ userId: string; externalId: string; installationId: string }>>();

/**
 * An end user with an exchange token minted in the test process under the local stack's key (the
 * same `EXCHANGE_KEYS_FILE` the handlers verify with), as POST /auth/exchange would mint it, so
 * end-user access is tested without a customer's key pair. Tokens stand for an installation and an
 * external user that must exist (DESIGN.md "Credentials die with what they stand for"): without
 * `installationId` an installation of the workspace is made for the spec, and the external user
 * (`externalId`, with `userId` when given) is made unless it exists; once per spec object, so a
 * spec used again mints tokens for the same records. Tokens live 5 minutes: mint one per use in
 * long tests. `now` mints it as of another time (expired tokens).
 */
export async function makeEndUser(spec: EndUserSpec, now?: number): Promise<EndUser> {
  localStack();
  let records = provisioned.get(spec);
  if (!records) {
    records = provision(spec);
    provisioned.set(spec, records);
  }
  const { userId, externalId, installationId } = await records;
  const { token, expiresAt } = await mintExchangeToken(
    {
      organizationId: spec.organizationId,
      workspaceId: spec.workspaceId,
      userId,
      externalId,
      installationId,
      markupRole: spec.markupRole ?? 'project:contributor',
      ...(spec.markupId ? { markupId: spec.markupId } : {}),
    },
    now,
  );
  return { token, userId, externalId, expiresAt };
}

/** The installation and external user of a spec, made where missing, written directly to the table. */
async function provision(spec: EndUserSpec): Promise<{ userId: string; externalId: string; installationId: string }> {
  const installationId = spec.installationId ?? (await insertTestInstallation(spec));
  const chosenUserId = spec.userId ?? randomUUID();
  const externalId = spec.externalId ?? `ext-${chosenUserId.slice(0, 8)}`;
  const existing = await getExternalUser(spec.workspaceId, externalId);
  if (existing) {
    if (spec.userId !== undefined && existing.userId !== spec.userId)
      throw new Error(`external user ${externalId} has userId ${existing.userId}, not ${spec.userId}`);
    return { userId: existing.userId, externalId, installationId };
  }
  const userId = chosenUserId;
  const at = Date.now();
  const written = await insertExternalUser({
    workspaceId: spec.workspaceId,
    organizationId: spec.organizationId,
    externalId,
    userId,
    name: null,
    email: null,
    avatarUrl: null,
    avatarFileId: null,
    createdAt: at,
    modifiedAt: at,
  });
  if (written !== 'written') throw new Error(`could not create external user ${externalId}: ${written}`);
  return { userId, externalId, installationId };
}

async function insertTestInstallation(spec: EndUserSpec): Promise<string> {
  const id = randomUUID();
  const at = new Date().toISOString();
  const result = await insertInstallation({
    id,
    organizationId: spec.organizationId,
    workspaceId: spec.workspaceId,
    publicKey: `pk_${randomBytes(32).toString('base64url')}`,
    signingKey: customerKeyPair().publicKey,
    allowedOrigins: null,
    markupId: null,
    url: null,
    status: 'active',
    createdAt: at,
    modifiedAt: at,
  });
  if (result !== 'created') throw new Error(`could not create an installation for an end user: ${result}`);
  return id;
}

/** Just the token of `makeEndUser`. */
export async function endUserToken(spec: EndUserSpec): Promise<string> {
  return (await makeEndUser(spec)).token;
}
