import { parseArgs } from 'node:util';
import { listApiKeys, revokeApiKey } from '../../shared/db/api-keys.js';
import { getItem, type MarkupRecord } from '../../shared/db/items.js';
import { backfillThreadIndex, markupsWithThreads } from '../../shared/db/thread-index-backfill.js';
import { backfillMarkupWords } from '../../shared/db/markup-words-backfill.js';
import { getThreadIndexState, THREAD_INDEX_LAYOUT } from '../../shared/db/thread-index.js';
import { API_SOURCE, IDENTITY_PROVIDER_SOURCE, installationSource, type ExternalUserSource } from '../../shared/db/external-users.js';
import { getInstallation } from '../../shared/db/installations.js';
import { getOrganization } from '../../shared/db/organizations.js';
import { getWorkspace } from '../../shared/db/workspaces.js';
import { assignLegacyExternalUsers } from '../../shared/domain/users/external-users.js';
import { defaultPlan, getPlan, savePlan, type Plan } from '../../shared/db/plans.js';
import {
  createOrganization,
  createOrganizationKey,
  createWorkspaceKey,
  type IssuedKey,
} from '../../shared/domain/organizations/organizations.js';
import { ROLES, type Role } from '../../shared/db/users.js';
import { getSqs } from '../../shared/clients.js';
import { getConfig, QUEUE_URL_ENV } from '../../shared/config.js';
import { describeFailure } from '../../shared/errors.js';
import { QUEUES, type QueueName } from '../../shared/queues.js';
import { attachToLocalStack } from '../local/services.js';
import { describeChain, QUEUE_OPTIONS, queueChain, queueOption, queueUrlOf, redrive } from './queues.js';
import { UsageError } from './usage-error.js';

/**
 * `npm run --silent admin -- <command>`: operator commands. Prints one JSON object on stdout. Works
 * against the running local stack (DATA_DIR/services.json) or, with TABLE_NAME set and AWS
 * credentials in the environment, against a deployed table; the `queue` commands against a deployed
 * stack's queues when their URLs are set (UPLOAD_QUEUE_URL, CONVERSION_QUEUE_URL, WEBHOOK_QUEUE_URL, THUMBNAIL_QUEUE_URL, MOVE_QUEUE_URL).
 */
const USAGE = `usage: admin <command>
  org create --name NAME
  key create --workspace ID [--email ADDRESS] [--role owner|admin|contributor|viewer] [--name LABEL]
  key create --org ID [--name LABEL]
  key revoke --id KEY_ID
  key list --org ID
  plan set --org ID [--markup-limit N|unlimited] [--storage-limit BYTES|unlimited] [--pause-comments on|off] [--storage-feature on|off] [--bundle N]
  plan show --org ID
  threads backfill [--markup ID | --recheck]
  search backfill [--workspace ID]
  users assign-source --workspace ID --source installation:ID|identity-provider|api [--external-id ID]
  queue show
  queue redrive --queue ${Object.keys(QUEUE_OPTIONS).join('|')}`;

const [group, action, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    name: { type: 'string' },
    workspace: { type: 'string' },
    org: { type: 'string' },
    email: { type: 'string' },
    role: { type: 'string' },
    id: { type: 'string' },
    'markup-limit': { type: 'string' },
    'storage-limit': { type: 'string' },
    'pause-comments': { type: 'string' },
    'storage-feature': { type: 'string' },
    bundle: { type: 'string' },
    markup: { type: 'string' },
    queue: { type: 'string' },
    source: { type: 'string' },
    'external-id': { type: 'string' },
    recheck: { type: 'boolean' },
  },
  strict: false,
});

function required(name: keyof typeof values): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** `--name` of a key: its label, the name its API user shows as author (trimmed, 1 to 200 characters, as names are in the API). */
function keyLabel(): string | undefined {
  if (values.name === undefined) return undefined;
  const label = typeof values.name === 'string' ? values.name.trim() : '';
  if (label === '' || label.length > 200) throw new UsageError('--name takes a label of 1 to 200 characters');
  return label;
}

function limit(name: 'markup-limit' | 'storage-limit', current: number | null): number | null {
  const value = values[name];
  if (value === undefined) return current;
  if (value === 'unlimited') return null;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new UsageError(`--${name} takes a whole number or "unlimited"`);
  return Number(value);
}

function toggle(name: 'pause-comments' | 'storage-feature', current: boolean): boolean {
  const value = values[name];
  if (value === undefined) return current;
  if (value !== 'on' && value !== 'off') throw new UsageError(`--${name} takes on or off`);
  return value === 'on';
}

function keyOutput(key: IssuedKey) {
  return {
    apiKey: key.apiKey,
    keyId: key.keyId,
    scope: key.scope,
    organizationId: key.organizationId,
    ...(key.workspaceId ? { workspaceId: key.workspaceId } : {}),
    userId: key.userId,
  };
}

async function requireOrganization(id: string): Promise<void> {
  if (!(await getOrganization(id))) throw new Error(`organization ${id} does not exist`);
}

async function run(): Promise<unknown> {
  const command = `${group ?? ''} ${action ?? ''}`;
  switch (command) {
    case 'org create': {
      const name = required('name');
      // Labelled keys: what they write shows a readable author, not "API key 1a2b3c4d".
      const created = await createOrganization(name, {
        organizationKeyName: `${name} organization key`,
        workspaceKeyName: `${name} workspace key`,
      });
      return {
        organizationId: created.organizationId,
        organizationApiKey: created.organizationApiKey.apiKey,
        workspaceId: created.workspaceId,
        workspaceApiKey: created.workspaceApiKey.apiKey,
      };
    }
    case 'key create': {
      if (values.workspace !== undefined && values.org !== undefined) throw new UsageError('pass --workspace or --org, not both');
      const name = keyLabel();
      if (values.org !== undefined) return keyOutput(await createOrganizationKey(required('org'), name));
      const workspaceId = required('workspace');
      const role = values.role as Role | undefined;
      if (role !== undefined && !ROLES.includes(role)) throw new UsageError(`--role takes one of ${ROLES.join(', ')}`);
      if (values.email === undefined && role !== undefined) throw new UsageError('--role goes with --email');
      const email = values.email === undefined ? undefined : required('email');
      if (email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new UsageError('--email is not an email address');
      return keyOutput(await createWorkspaceKey(workspaceId, email ? { email, role } : undefined, name));
    }
    case 'key revoke': {
      const keyId = required('id');
      if (!(await revokeApiKey(keyId))) throw new Error(`key ${keyId} does not exist or is already revoked`);
      return { keyId, revoked: true };
    }
    case 'key list': {
      const organizationId = required('org');
      await requireOrganization(organizationId);
      return { organizationId, keys: await listApiKeys(organizationId) };
    }
    case 'plan show': {
      const organizationId = required('org');
      await requireOrganization(organizationId);
      return await getPlan(organizationId);
    }
    case 'plan set': {
      const organizationId = required('org');
      const bundle = values.bundle;
      if (bundle !== undefined && (typeof bundle !== 'string' || !/^\d+$/.test(bundle)))
        throw new UsageError('--bundle takes a whole number');
      const change = (current: Plan): Plan => ({
        ...current,
        markupLimit: limit('markup-limit', current.markupLimit),
        storageLimitBytes: limit('storage-limit', current.storageLimitBytes),
        pauseCommentsEnabled: toggle('pause-comments', current.pauseCommentsEnabled),
        storageFeatureEnabled: toggle('storage-feature', current.storageFeatureEnabled),
        bundleBalance: bundle === undefined ? current.bundleBalance : Number(bundle),
        modifiedAt: new Date().toISOString(),
      });
      change(defaultPlan(organizationId));
      await requireOrganization(organizationId);
      const plan = change(await getPlan(organizationId));
      await savePlan(plan);
      return plan;
    }
    case 'threads backfill': {
      // The markup named (checked again even when indexed), or every markup with threads not yet
      // indexed (a Scan: operator tooling only; indexed markups are kept in step by their writes),
      // or with --recheck every markup with threads, indexed or not: after an upgrade during which
      // an older release wrote beside this one (its copies and marks are repaired and folded).
      const named = values.markup !== undefined;
      const markupIds = named ? [required('markup')] : await markupsWithThreads();
      const markups = [];
      // A markup that fails (its threads kept changing through every attempt) is reported and
      // skipped, so one busy markup never holds back the rest; the run then exits 1 after printing
      // (a markup named by --markup fails the command as before).
      const failed: { markupId: string; error: string }[] = [];
      let alreadyIndexed = 0;
      for (const markupId of markupIds) {
        if (!named && values.recheck !== true && (await getThreadIndexState(markupId)).layout === THREAD_INDEX_LAYOUT) {
          alreadyIndexed += 1;
          continue;
        }
        const markup = await getItem(markupId, true);
        if (!markup || markup.kind !== 'markup') {
          if (values.markup !== undefined) throw new Error(`markup ${markupId} does not exist`);
          continue;
        }
        try {
          markups.push(await backfillThreadIndex(markup as MarkupRecord));
        } catch (error) {
          if (named) throw error;
          failed.push({ markupId, error: describeFailure(error) });
        }
      }
      if (named) return { markups };
      if (failed.length === 0) return { markups, alreadyIndexed };
      process.exitCode = 1;
      return { markups, alreadyIndexed, failed };
    }
    case 'search backfill': {
      // The markup word index (issue 34) for markups written before it: one workspace's markups
      // (a Query), or every markup (a Scan: operator tooling only). Idempotent, safe beside traffic.
      return backfillMarkupWords(values.workspace === undefined ? {} : { workspaceId: required('workspace') });
    }
    case 'users assign-source': {
      // Legacy external users (no source: written before sources were recorded) of a workspace
      // with several installations are refused to every exchange until assigned here.
      const workspaceId = required('workspace');
      const externalId = values['external-id'] === undefined ? undefined : required('external-id');
      const source = await sourceOption(workspaceId, required('source'));
      const workspace = await getWorkspace(workspaceId, true);
      if (!workspace) throw new Error(`workspace ${workspaceId} does not exist`);
      const { assigned, alreadySourced } = await assignLegacyExternalUsers(
        { id: workspaceId, organizationId: workspace.organizationId },
        source,
        externalId,
      );
      return { workspaceId, source, assigned, alreadySourced };
    }
    case 'queue show': {
      // Every queue whose URL is known (all of them locally; deployed, those the operator set).
      const shown: Record<string, unknown> = {};
      for (const [option, name] of Object.entries(QUEUE_OPTIONS)) {
        const url = queueUrlOf(getConfig(), name);
        if (url) shown[option] = await describeChain(getSqs(), await queueChain(getSqs(), url));
      }
      return shown;
    }
    case 'queue redrive': {
      const { name } = queueOption(values.queue);
      return await redrive(getSqs(), await queueChain(getSqs(), requiredQueueUrl(name)));
    }
    default:
      throw new UsageError(`unknown command "${command.trim()}"`);
  }
}

/** `--source`: `api`, `identity-provider`, or `installation:<id>` of an installation of the workspace. */
async function sourceOption(workspaceId: string, value: string): Promise<ExternalUserSource> {
  if (value === API_SOURCE || value === IDENTITY_PROVIDER_SOURCE) return value;
  const installationId = /^installation:(.+)$/.exec(value)?.[1];
  if (installationId === undefined) throw new UsageError('--source takes installation:<installationId>, identity-provider or api');
  const installation = await getInstallation(installationId);
  if (installation?.workspaceId !== workspaceId)
    throw new Error(`installation ${installationId} is not an installation of workspace ${workspaceId}`);
  return installationSource(installationId);
}

function requiredQueueUrl(name: QueueName): string {
  const url = queueUrlOf(getConfig(), name);
  if (!url)
    throw new Error(
      `${QUEUE_URL_ENV[name]} is not set: it takes the queue's URL, the export ReviewBoardData-<stage>:${QUEUES[name].id}QueueUrl`,
    );
  return url;
}

/**
 * Deployed or local: the table commands go to a deployed table when TABLE_NAME is set, the queue
 * commands to deployed queues when a queue URL is; otherwise both go to the local stack in DATA_DIR.
 */
function connect(): void {
  const deployed =
    group === 'queue' ? Object.values(QUEUE_URL_ENV).some((variable) => process.env[variable]) : Boolean(process.env.TABLE_NAME);
  if (deployed || attachToLocalStack()) return;
  throw new Error(
    group === 'queue'
      ? `no local stack found in DATA_DIR (run \`npm start\`), and no queue URL (${Object.values(QUEUE_URL_ENV).join(', ')}) is set for a deployed stack`
      : 'no local stack found in DATA_DIR (run `npm start`), and TABLE_NAME is not set for a deployed table',
  );
}

try {
  // Bad usage is answered as such, whether or not a stack is found.
  if (group === 'queue' && action === 'redrive') queueOption(values.queue);
  connect();
  process.stdout.write(`${JSON.stringify(await run())}\n`);
  // 0, or the process.exitCode a command set when part of what it printed failed (`threads backfill`'s `failed`).
  process.exit();
} catch (error) {
  const message = describeFailure(error);
  process.stderr.write(`${JSON.stringify({ error: message })}\n`);
  if (error instanceof UsageError) process.stderr.write(`${USAGE}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
}
