import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getConfig } from '../config.js';
import { getDb } from '../clients.js';
import { isTransactionConflict } from './core/errors.js';
import { scanMatching } from './core/paging.js';
import { putNew, tryTransact, type TransactItem } from './core/transact.js';
import { toUserItem, userKey, type User } from './users.js';

/**
 * Who made an external user (DESIGN.md "Trust rules": end users belong to the source that made
 * them): `installation:<installationId>` (its customer JWTs), `identity-provider` (the SDK
 * exchange) or `api` (POST /users/external). Only its own source may exchange as it; an API-made
 * user is bound to the first installation that does. A record written before sources were recorded
 * has none (a legacy record: any of the three may have made it); see `upsertExternalUserFromClaims`
 * and `legacyExternalUsersOf`.
 */
export type ExternalUserSource = 'api' | 'identity-provider' | `installation:${string}`;

export const API_SOURCE = 'api' satisfies ExternalUserSource;
export const IDENTITY_PROVIDER_SOURCE = 'identity-provider' satisfies ExternalUserSource;
export const installationSource = (installationId: string): ExternalUserSource => `installation:${installationId}`;
export const isInstallationSource = (source: ExternalUserSource) => source.startsWith('installation:');

/**
 * External (feedback) users: the people a customer's site identifies by its own id (`externalId`,
 * the customer JWT's `sub`), one record per workspace and external id. Each has a User record of
 * kind `external` (`userId`) that threads and messages are authored by, so authors resolve with the
 * one BatchGet of `USER#` records every view makes; its `name` follows the external record in the
 * same transaction as every change of it. Times are millisecond numbers, as users' are.
 */
export interface ExternalUserRecord {
  workspaceId: string;
  organizationId: string;
  externalId: string;
  /** Absent on legacy records, written before sources were recorded. */
  source?: ExternalUserSource;
  userId: string;
  name: string | null;
  email: string | null;
  avatarUrl: string | null;
  avatarFileId: string | null;
  createdAt: number;
  modifiedAt: number;
}

export const EXTERNAL_ID_MAX_LENGTH = 255;

/** What the author of a deleted external user's threads and messages is called from then on. */
export const FORMER_USER_NAME = 'Former user';

export const externalUserKey = (workspaceId: string, externalId: string) => ({ PK: `EXTUSER#${workspaceId}#${externalId}`, SK: 'EXTUSER' });

const INTERNAL = new Set(['PK', 'SK', 'entity']);

export function toExternalUserItem(record: ExternalUserRecord): Record<string, unknown> {
  return { ...externalUserKey(record.workspaceId, record.externalId), entity: 'ExternalUser', ...record };
}

function fromExternalUserItem(item: Record<string, unknown>): ExternalUserRecord {
  return Object.fromEntries(Object.entries(item).filter(([name]) => !INTERNAL.has(name))) as unknown as ExternalUserRecord;
}

/** The name shown for an external user: its name, else its email, else its external id. */
export const displayNameOf = (record: Pick<ExternalUserRecord, 'name' | 'email' | 'externalId'>): string =>
  record.name ?? record.email ?? record.externalId;

/** The User record an external user authors as. */
export function externalUserAccount(record: ExternalUserRecord): User {
  return {
    id: record.userId,
    name: displayNameOf(record),
    // The address lives on the external record: it is the customer's claim, neither verified nor
    // unique, so it never takes the `EMAIL#` claim members' addresses hold.
    email: null,
    emailVerified: false,
    kind: 'external',
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
  };
}

/** One external user, read strongly consistent (a write follows on what it says). */
export async function getExternalUser(workspaceId: string, externalId: string): Promise<ExternalUserRecord | undefined> {
  const result = await getDb().send(
    new GetCommand({ TableName: getConfig().tableName, Key: externalUserKey(workspaceId, externalId), ConsistentRead: true }),
  );
  return result.Item ? fromExternalUserItem(result.Item) : undefined;
}

/**
 * The legacy external users (no `source`) of a workspace: a Scan, for the admin CLI's
 * `users assign-source` only (no write makes a record without a source any more).
 */
export async function legacyExternalUsersOf(workspaceId: string): Promise<ExternalUserRecord[]> {
  const records: ExternalUserRecord[] = [];
  const filter = {
    expression: 'entity = :entity AND workspaceId = :workspace AND attribute_not_exists(#source)',
    names: { '#source': 'source' },
    values: { ':entity': 'ExternalUser', ':workspace': workspaceId },
  };
  for await (const item of scanMatching(filter)) records.push(fromExternalUserItem(item));
  return records;
}

/** What a conditional write of an external user came to: written, or `stale` (read again), or `exists`/`conflict`. */
export type ExternalUserWrite = 'written' | 'exists' | 'stale' | 'conflict';

async function attempt(items: TransactItem[], onFailed: (index: number) => ExternalUserWrite): Promise<ExternalUserWrite> {
  try {
    const [failed] = await tryTransact(items);
    return failed === undefined ? 'written' : onFailed(failed);
  } catch (error) {
    // Another transaction held one of the items (a concurrent first exchange): the caller reads again.
    if (isTransactionConflict(error)) return 'conflict';
    throw error;
  }
}

/**
 * Creates the external user and its User record in one transaction, the external record
 * conditionally: of two creations of the same (workspace, externalId), one commits and the other
 * answers `exists`, so there is one external user and one userId.
 */
export function insertExternalUser(record: ExternalUserRecord): Promise<ExternalUserWrite> {
  return attempt([putNew(toExternalUserItem(record)), putNew(toUserItem(externalUserAccount(record)))], (index) =>
    index === 0 ? 'exists' : 'stale',
  );
}

/**
 * The condition of every write of an existing external record: it is exactly as read (its
 * `modifiedAt`) and still belongs to the source it was read with. The source is checked in its own
 * right, not only through `modifiedAt`: of two installations binding one API-made user at once,
 * the second write finds the first's source and fails, whatever the two clocks said.
 */
function unchangedSince(
  previous: ExternalUserRecord,
): Pick<Update, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> {
  return previous.source === undefined
    ? {
        ConditionExpression: 'modifiedAt = :read AND attribute_not_exists(#source)',
        ExpressionAttributeNames: { '#source': 'source' },
        ExpressionAttributeValues: { ':read': previous.modifiedAt },
      }
    : {
        ConditionExpression: 'modifiedAt = :read AND #source = :source',
        ExpressionAttributeNames: { '#source': 'source' },
        ExpressionAttributeValues: { ':read': previous.modifiedAt, ':source': previous.source },
      };
}
type Update = NonNullable<TransactItem['Update']>;

/** A Put of the external record conditioned on it being exactly as read (`unchangedSince`). */
function putIfUnchanged(previous: ExternalUserRecord, item: Record<string, unknown>): TransactItem {
  return { Put: { TableName: getConfig().tableName, Item: item, ...unchangedSince(previous) } };
}

function renameAccount(userId: string, name: string, at: number): TransactItem {
  return {
    Update: {
      TableName: getConfig().tableName,
      Key: userKey(userId),
      UpdateExpression: 'SET #name = :name, modifiedAt = :at',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#name': 'name' },
      ExpressionAttributeValues: { ':name': name, ':at': at },
    },
  };
}

/**
 * Replaces the external record with `next` if it is still as `previous` was read, source included
 * (`stale` otherwise), renaming its User record in the same transaction when the shown name
 * changes. Binding an API-made user to an installation is such a change (`next.source`).
 */
export function writeExternalUserChange(previous: ExternalUserRecord, next: ExternalUserRecord): Promise<ExternalUserWrite> {
  const items = [putIfUnchanged(previous, toExternalUserItem(next))];
  if (displayNameOf(next) !== displayNameOf(previous)) items.push(renameAccount(next.userId, displayNameOf(next), next.modifiedAt));
  return attempt(items, () => 'stale');
}

/**
 * Deletes the external record if it is still as read, and in the same transaction renames its
 * User record `Former user`: threads and messages keep an author, no longer named. The userId is
 * never reused; the same externalId created again is a new user.
 */
export function deleteExternalUserRecord(previous: ExternalUserRecord, at: number): Promise<ExternalUserWrite> {
  const { tableName } = getConfig();
  return attempt(
    [
      {
        Delete: { TableName: tableName, Key: externalUserKey(previous.workspaceId, previous.externalId), ...unchangedSince(previous) },
      },
      renameAccount(previous.userId, FORMER_USER_NAME, at),
    ],
    () => 'stale',
  );
}
