import { resolveThread, unresolveThread } from '../../shared/domain/comments/change-thread.js';
import { ok, operation } from '../../shared/http/route.js';
import { ResolvedSchema, ThreadIdParams, UnresolvedSchema } from './schemas.js';

export const resolveThreadOperation = operation({
  operationId: 'resolveThread',
  summary: 'Resolve a thread',
  description: "Resolves a thread; it no longer counts in the markup's `activeThreads`.",
  auth: 'apiKey',
  permission: 'thread:update',
  params: ThreadIdParams,
  responses: [{ status: 200, description: 'Resolved', schema: ResolvedSchema }],
  handle: async ({ principal, params, ifMatch }) => ok(await resolveThread(principal, params.id, ifMatch)),
});

export const unresolveThreadOperation = operation({
  operationId: 'unresolveThread',
  summary: 'Reopen a thread',
  description: 'Reopens a resolved thread.',
  auth: 'apiKey',
  permission: 'thread:update',
  params: ThreadIdParams,
  responses: [{ status: 200, description: 'Unresolved', schema: UnresolvedSchema }],
  handle: async ({ principal, params, ifMatch }) => ok(await unresolveThread(principal, params.id, ifMatch)),
});
