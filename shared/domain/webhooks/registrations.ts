import { randomBytes, randomUUID } from 'node:crypto';
import { authorize, requireInScope } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import type { DeliverableEvent, EventType } from '../../db/events.js';
import type { Page } from '../../db/core/paging.js';
import { AGAIN, withBackoff } from '../../db/core/backoff.js';
import { nextTime } from '../../db/core/transact.js';
import {
  deleteWebhookRegistration as deleteRecord,
  getWebhookRegistration,
  insertWebhookRegistration,
  listWorkspaceWebhookRegistrations,
  updateWebhookRegistration as updateRecord,
  type WebhookRegistrationRecord,
} from '../../db/webhooks.js';
import { getWorkspace } from '../../db/workspaces.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { resolveWorkspace } from '../workspaces/scope.js';
import { WEBHOOK_EVENT_TYPES, type WebhookRegistrationView } from '../../schemas/webhooks.js';
import { distinctEventTypes } from './input.js';

/** The spec's Webhook registration (`WebhookRegistrationSchema`). */
export type WebhookRegistration = WebhookRegistrationView;

/** Create input, validated (`url` checked by `checkWebhookUrl`). */
export interface WebhookRegistrationInput {
  workspaceId?: string;
  url: string;
  /** Absent or null: every type. */
  eventTypes?: EventType[] | null;
  enabled?: boolean;
}

/** Update input, validated; absent fields stay, `eventTypes: null` goes back to every type. */
export interface WebhookRegistrationUpdate {
  url?: string;
  eventTypes?: EventType[] | null;
  enabled?: boolean;
}

/** The public shape. The signing key is shown: the receiver needs it to verify signatures, and reading needs `webhook:read` (admin). */
export function toPublicWebhookRegistration(record: WebhookRegistrationRecord): WebhookRegistration {
  return {
    id: record.id,
    createdAt: record.createdAt,
    modifiedAt: record.modifiedAt,
    deletedAt: null,
    url: record.url,
    workspaceId: record.workspaceId,
    eventTypes: record.eventTypes ?? [...WEBHOOK_EVENT_TYPES],
    enabled: record.enabled,
    signingKey: record.signingKey,
  };
}

/**
 * Whether a registration takes an event: it is enabled, was enabled when the event happened
 * (events of a disabled period are never delivered, not even after a re-enable: DESIGN.md), and is
 * subscribed to the type (`webhook.test` is sent whatever the types are). The fan-out asks with the
 * index's copy, the delivery worker again with a consistent read at each attempt.
 */
export function receivesEvent(
  registration: WebhookRegistrationRecord,
  event: Pick<DeliverableEvent, 'type' | 'createdAt'>,
  asked: { redelivery?: boolean } = {},
): boolean {
  if (!registration.enabled) return false;
  // A redelivery is asked for by name, of an event that was delivered (so not of a disabled period).
  if (!asked.redelivery && registration.enabledAt !== undefined && event.createdAt < registration.enabledAt) return false;
  return event.type === 'webhook.test' || registration.eventTypes === null || registration.eventTypes.includes(event.type);
}

/** `whsec_` + base64 of 32 random bytes, the Standard Webhooks secret format. */
export const newWebhookSigningKey = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Registrations per workspace: each event costs the fan-out one job per registration, so the cap
 * bounds its work per event (a 50-markup bulk creation with the cap: 1,250 jobs).
 */
export const MAX_WEBHOOK_REGISTRATIONS = 25;

const storedTypes = (types: EventType[] | null | undefined) =>
  types === null ? null : types === undefined ? undefined : distinctEventTypes(types);

/** Creates a registration in the caller's workspace (organization keys name it: 400 without, 403 for another organization's). */
export async function createWebhookRegistration(principal: Principal, input: WebhookRegistrationInput): Promise<WebhookRegistrationRecord> {
  const workspace = await resolveWorkspace(principal, input.workspaceId);
  const at = new Date().toISOString();
  const record: WebhookRegistrationRecord = {
    id: randomUUID(),
    organizationId: workspace.organizationId,
    workspaceId: workspace.id,
    url: input.url,
    eventTypes: storedTypes(input.eventTypes) ?? null,
    enabled: input.enabled ?? true,
    signingKey: newWebhookSigningKey(),
    createdAt: at,
    modifiedAt: at,
    ...(input.enabled === false ? {} : { enabledAt: at }),
  };
  const outcome = await insertWebhookRegistration(record, MAX_WEBHOOK_REGISTRATIONS);
  if (outcome === 'workspace-gone') throw new NotFoundError(`Workspace ${workspace.id} was deleted meanwhile.`);
  if (outcome === 'limit') {
    throw new ConflictError(
      `Workspace ${workspace.id} has ${MAX_WEBHOOK_REGISTRATIONS} webhook registrations, the most it may have; delete one first.`,
      'webhook-registration-limit',
    );
  }
  if (outcome === 'taken') throw new ConflictError('The registration could not be created because its id is taken; try again.');
  return record;
}

/**
 * A registration the caller may act on with the route's permission: 404 for an unknown id or one
 * of a deleted workspace, 403 for one outside the key's organization or workspace.
 */
export async function loadWebhookRegistration(principal: Principal, id: string): Promise<WebhookRegistrationRecord> {
  const record = await getWebhookRegistration(id);
  if (!record) throw new NotFoundError(`Webhook registration ${id} does not exist.`);
  requireInScope(principal, { id: record.workspaceId, organizationId: record.organizationId }, `Webhook registration ${id}`);
  const workspace = await getWorkspace(record.workspaceId);
  if (!workspace) throw new NotFoundError(`Webhook registration ${id} does not exist.`);
  await authorize(principal, workspace);
  return record;
}

/**
 * Applies a change to the registration as read, retried from a fresh read when another change
 * (another request, or a delivery disabling it) came first. Enabling a disabled registration
 * starts `enabledAt` afresh (events of the disabled period stay undelivered); a new URL or a
 * re-enable forgets `failingSince`.
 */
async function change(
  principal: Principal,
  id: string,
  changes: WebhookRegistrationUpdate & { signingKey?: string },
): Promise<WebhookRegistrationRecord> {
  return withBackoff(
    async () => {
      const current = await loadWebhookRegistration(principal, id);
      const modifiedAt = new Date(nextTime(Date.parse(current.modifiedAt))).toISOString();
      const enabling = changes.enabled === true && !current.enabled;
      const newUrl = changes.url !== undefined && changes.url !== current.url;
      const updated = await updateRecord(
        id,
        {
          ...changes,
          eventTypes: storedTypes(changes.eventTypes),
          ...(enabling ? { enabledAt: modifiedAt } : {}),
          ...(enabling || newUrl ? { clearFailing: true as const } : {}),
        },
        modifiedAt,
        current.modifiedAt,
      );
      if (updated === 'stale') return AGAIN;
      if (!updated) throw new NotFoundError(`Webhook registration ${id} does not exist.`);
      return updated;
    },
    {
      attempts: 5,
      baseMs: 20,
      exhausted: () => new ConflictError(`Webhook registration ${id} is being changed by another request; try again.`),
    },
  );
}

/** Changes `url`, `eventTypes` or `enabled`; a concurrent delete that won leaves this one a 404. */
export function updateWebhookRegistration(
  principal: Principal,
  id: string,
  update: WebhookRegistrationUpdate,
): Promise<WebhookRegistrationRecord> {
  return change(principal, id, { url: update.url, eventTypes: update.eventTypes, enabled: update.enabled });
}

/** Replaces the signing key; every later attempt, retries of older events included, is signed with the new one only. */
export function refreshWebhookSigningKey(principal: Principal, id: string): Promise<WebhookRegistrationRecord> {
  return change(principal, id, { signingKey: newWebhookSigningKey() });
}

/** One page of a workspace's registrations, newest first. */
export async function listWebhookRegistrations(
  principal: Principal,
  query: { workspaceId?: string; limit: number; before?: string },
): Promise<Page<WebhookRegistrationRecord>> {
  const workspace = await resolveWorkspace(principal, query.workspaceId);
  return listWorkspaceWebhookRegistrations(workspace.id, { limit: query.limit, before: query.before });
}

/** Deletes a registration; a concurrent delete that won leaves this one a 404. */
export async function deleteWebhookRegistration(principal: Principal, id: string): Promise<void> {
  const record = await loadWebhookRegistration(principal, id);
  if (!(await deleteRecord(record))) throw new NotFoundError(`Webhook registration ${id} does not exist.`);
}
