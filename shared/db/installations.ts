import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { queryAll, queryPage, type Page } from './core/paging.js';
import { SORT_SEPARATOR, recordOf } from './core/table.js';
import { forEachLimit } from '../concurrency.js';
import { installationOrigins, originWrites } from './allowed-origins.js';
import { putNew, tryTransact, type TransactItem } from './core/transact.js';
import { workspaceKey } from './workspaces.js';

/**
 * An installation of the embedded commenting client (spec "Installation"). It never changes once
 * created: it is created and deleted, so its publicKey claim never needs updating beside it.
 */
export interface InstallationRecord {
  id: string;
  organizationId: string;
  workspaceId: string;
  /** Browser-safe public identifier (`pk_` + 32 random bytes, base64url); never the signing key. */
  publicKey: string;
  /** The customer's RSA public key, normalised to SPKI PEM; verifies their RS256 JWTs. */
  signingKey: string;
  /** Exact lower-case origins (`https://host[:port]`), or null: the SDK exchange defaults apply. */
  allowedOrigins: string[] | null;
  /** The webpage markup created with the installation (`url`), or null. */
  markupId: string | null;
  /**
   * The page the installation was created for, or null (absent on none but records written before
   * it was kept). Without `allowedOrigins`, its origin is the one admitted (`installationOrigins`).
   */
  url?: string | null;
  status: 'active';
  createdAt: string;
  modifiedAt: string;
}

export const installationKey = (installationId: string) => ({ PK: `INSTALLATION#${installationId}`, SK: 'INSTALLATION' });
/** Claims a publicKey for one installation, so two installations can never share one. */
export const publicKeyClaimKey = (publicKey: string) => ({ PK: `INSTALLATION_PUBLIC_KEY#${publicKey}`, SK: 'INSTALLATION_PUBLIC_KEY' });
/** GSI1 lists a workspace's installations by creation time. */
export const workspaceInstallationsPartition = (workspaceId: string) => `WS#${workspaceId}#INSTALLATIONS`;

/** The shape of a publicKey this module hands out; anything else is never looked up (no oversized keys reach DynamoDB). */
const PUBLIC_KEY_FORMAT = /^pk_[A-Za-z0-9_-]{43}$/;
const ID_FORMAT = /^[0-9a-fA-F-]{36}$/;

export function toInstallationItem(record: InstallationRecord): Record<string, unknown> {
  return {
    ...installationKey(record.id),
    entity: 'Installation',
    ...record,
    GSI1PK: workspaceInstallationsPartition(record.workspaceId),
    GSI1SK: `${record.createdAt}${SORT_SEPARATOR}${record.id}`,
  };
}

function fromInstallationItem(item: Record<string, unknown>): InstallationRecord {
  const { GSI1PK: _partition, GSI1SK: _sort, ...rest } = recordOf<InstallationRecord & { GSI1PK: string; GSI1SK: string }>(item);
  return rest;
}

/**
 * Transaction items creating an installation and claiming its publicKey, both conditional puts,
 * with a check that its workspace is still live: a transaction holding them writes nothing if
 * either record exists or the workspace was deleted meanwhile (its content deletion has run or is
 * queued, and would miss an installation created after it). They also count the installation's
 * origins up in the CORS origin index (unconditional updates, after the conditional items).
 */
export function installationWrites(record: InstallationRecord): TransactItem[] {
  return [
    {
      ConditionCheck: {
        TableName: getConfig().tableName,
        Key: workspaceKey(record.workspaceId),
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(deletedAt)',
      },
    },
    putNew(toInstallationItem(record)),
    putNew({
      ...publicKeyClaimKey(record.publicKey),
      entity: 'InstallationPublicKey',
      installationId: record.id,
      workspaceId: record.workspaceId,
    }),
    ...originWrites(installationOrigins(record), 1),
  ];
}

/** Creates an installation with its publicKey claim in one transaction, or answers why it did not. */
export async function insertInstallation(record: InstallationRecord): Promise<'created' | 'workspace-gone' | 'taken'> {
  const failed = await tryTransact(installationWrites(record));
  if (failed.length === 0) return 'created';
  return failed.includes(0) ? 'workspace-gone' : 'taken';
}

async function getConsistent(key: Record<string, string>): Promise<Record<string, unknown> | undefined> {
  const result = await getDb().send(new GetCommand({ TableName: getConfig().tableName, Key: key, ConsistentRead: true }));
  return result.Item;
}

/**
 * The installation with this id, or undefined. Strongly consistent: once a delete answered, no
 * reader (GET, token exchange) sees the installation again.
 */
export async function getInstallation(id: string): Promise<InstallationRecord | undefined> {
  if (!ID_FORMAT.test(id)) return undefined;
  const item = await getConsistent(installationKey(id));
  return item ? fromInstallationItem(item) : undefined;
}

/**
 * The installation holding this publicKey, or undefined: two strongly consistent GetItems (the
 * claim, then the record), no index. A claim whose installation is gone, or that names another
 * installation's key, resolves to nothing.
 */
export async function getInstallationByPublicKey(publicKey: string): Promise<InstallationRecord | undefined> {
  if (!PUBLIC_KEY_FORMAT.test(publicKey)) return undefined;
  const claim = await getConsistent(publicKeyClaimKey(publicKey));
  if (typeof claim?.installationId !== 'string') return undefined;
  const installation = await getInstallation(claim.installationId);
  return installation?.publicKey === publicKey ? installation : undefined;
}

/** One page of a workspace's installations, newest first (next page: `before=<nextCursor>`). */
export async function listWorkspaceInstallations(
  workspaceId: string,
  page: { limit: number; before?: string },
): Promise<Page<InstallationRecord>> {
  return queryPage(
    {
      list: 'installations',
      index: 'GSI1',
      partitionValue: workspaceInstallationsPartition(workspaceId),
      ascending: false,
      limit: page.limit,
      before: page.before,
    },
    fromInstallationItem,
  );
}

/**
 * The id of the workspace's only installation, or undefined when it has none or more than one:
 * one Query of GSI1 with `Limit 2` (a page of one reads one more to know whether more exist).
 * Eventually consistent, so an installation created or deleted a moment ago may not show yet:
 * callers compare the id with the installation they act for.
 */
export async function soleInstallationIdOf(workspaceId: string): Promise<string | undefined> {
  const page = await listWorkspaceInstallations(workspaceId, { limit: 1 });
  return page.hasMore ? undefined : page.items[0]?.id;
}

/**
 * Deletes an installation and its publicKey claim in one transaction, counting its origins down in
 * the origin index; false when it was already gone (a concurrent delete), in which case nothing
 * was written, so each installation's origins are counted down exactly once.
 */
export async function deleteInstallation(record: InstallationRecord): Promise<boolean> {
  const tableName = getConfig().tableName;
  const failed = await tryTransact([
    { Delete: { TableName: tableName, Key: installationKey(record.id), ConditionExpression: 'attribute_exists(PK)' } },
    {
      Delete: {
        TableName: tableName,
        Key: publicKeyClaimKey(record.publicKey),
        ConditionExpression: 'installationId = :id',
        ExpressionAttributeValues: { ':id': record.id },
      },
    },
    ...originWrites(installationOrigins(record), -1),
  ]);
  return failed.length === 0;
}

/**
 * Removes every installation of a deleted workspace with its publicKey claim, each in its own
 * transaction with its origins' count-down (`deleteInstallation`), so the origin index never keeps
 * a grant for an installation that is gone. A run cut short leaves whole installations, which a
 * rerun deletes; one another request deleted meanwhile is skipped.
 */
export async function deleteWorkspaceInstallations(workspaceId: string): Promise<number> {
  let deleted = 0;
  let batch: InstallationRecord[] = [];
  const flush = async () => {
    await forEachLimit(batch, 8, async (record) => {
      if (await deleteInstallation(record)) deleted += 1;
    });
    batch = [];
  };
  for await (const item of queryAll('GSI1', workspaceInstallationsPartition(workspaceId))) {
    batch.push(fromInstallationItem(item));
    if (batch.length === 100) await flush();
  }
  if (batch.length > 0) await flush();
  return deleted;
}
