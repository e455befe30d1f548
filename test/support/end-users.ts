import { randomUUID } from 'node:crypto';
import { mintExchangeToken } from '../../shared/auth/exchange-tokens.js';
import type { EndUserRole } from '../../shared/auth/permissions.js';
import { localStack } from './api.js';

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

/**
 * An end user with an exchange token minted in the test process under the local stack's key (the
 * same `EXCHANGE_KEYS_FILE` the handlers verify with), as POST /auth/exchange would mint it, so
 * end-user access is tested without an installation. Tokens live 5 minutes: mint one per use in
 * long tests. `now` mints it as of another time (expired tokens).
 */
export async function makeEndUser(spec: EndUserSpec, now?: number): Promise<EndUser> {
  localStack();
  const userId = spec.userId ?? randomUUID();
  const externalId = spec.externalId ?? `ext-${userId.slice(0, 8)}`;
  const { token, expiresAt } = await mintExchangeToken(
    {
      organizationId: spec.organizationId,
      workspaceId: spec.workspaceId,
      userId,
      externalId,
      installationId: spec.installationId ?? randomUUID(),
      markupRole: spec.markupRole ?? 'project:contributor',
      ...(spec.markupId ? { markupId: spec.markupId } : {}),
    },
    now,
  );
  return { token, userId, externalId, expiresAt };
}

/** Just the token of `makeEndUser`. */
export async function endUserToken(spec: EndUserSpec): Promise<string> {
  return (await makeEndUser(spec)).token;
}
