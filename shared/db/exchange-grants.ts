import { externalUserKey } from './external-users.js';
import { installationKey } from './installations.js';
import { batchGet } from './transact.js';

/** What an exchange token stands for, as the table holds it now. */
export interface ExchangeGrantRecords {
  /** The workspace of the token's installation; undefined once the installation is deleted. */
  installationWorkspaceId?: string;
  /** The User record of the token's external user; undefined once the external user is deleted. */
  externalUserId?: string;
}

/**
 * The installation and the external user an exchange token names, in one strongly consistent
 * BatchGetItem (`authenticate`'s liveness check, DESIGN.md "Credentials die with what they stand
 * for"): once a delete answered, no request reads either again.
 */
export async function readExchangeGrantRecords(grant: { installationId: string; workspaceId: string; externalId: string }): Promise<ExchangeGrantRecords> {
  const installation = installationKey(grant.installationId);
  const externalUser = externalUserKey(grant.workspaceId, grant.externalId);
  const items = await batchGet([installation, externalUser], { consistent: true });
  const found: ExchangeGrantRecords = {};
  for (const item of items) {
    if (item.PK === installation.PK && item.SK === installation.SK && typeof item.workspaceId === 'string') found.installationWorkspaceId = item.workspaceId;
    if (item.PK === externalUser.PK && item.SK === externalUser.SK && typeof item.userId === 'string') found.externalUserId = item.userId;
  }
  return found;
}
