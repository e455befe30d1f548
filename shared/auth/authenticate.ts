import { getApiKey } from '../db/api-keys.js';
import { UnauthorizedError } from '../http/errors.js';
import { parseApiKey, secretMatches } from './api-key-format.js';
import type { Principal } from './principal.js';

/**
 * Resolves `Authorization: Bearer <API key>` to the caller. Every failure is the same 401, so a
 * caller cannot tell an unknown key from a revoked one or a wrong secret.
 */
export async function authenticate(authorization: string | undefined): Promise<Principal> {
  if (!authorization) throw new UnauthorizedError('Missing Authorization header: send Authorization: Bearer <API key>.');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new UnauthorizedError('The Authorization header must be: Bearer <API key>.');
  const parsed = parseApiKey(match[1]!);
  if (!parsed) throw new UnauthorizedError('The credential is not a valid API key.');
  const record = await getApiKey(parsed.keyId);
  if (!record || record.revokedAt || !secretMatches(parsed.secret, record.secretHash)) {
    throw new UnauthorizedError('The API key is not valid or has been revoked.');
  }
  if (record.scope === 'workspace') {
    return {
      kind: 'apiKey',
      scope: 'workspace',
      keyId: record.keyId,
      organizationId: record.organizationId,
      workspaceId: record.workspaceId!,
      userId: record.userId,
    };
  }
  return { kind: 'apiKey', scope: 'organization', keyId: record.keyId, organizationId: record.organizationId, userId: record.userId };
}
