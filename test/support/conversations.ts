import { randomUUID } from 'node:crypto';
import type { MarkupRecord } from '../../shared/db/items.js';
import type { Role } from '../../shared/db/users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, makeOrganization, type Org } from './api.js';
import { createThread, makeTypedMarkup } from './threads.js';

export interface Member {
  key: string;
  userId: string;
  name: string;
}

/** A workspace member acting through its own key: a distinct user with `role` (mentionable). */
export async function addMember(workspaceId: string, role: Role = 'contributor'): Promise<Member> {
  const local = `${role}-${randomUUID().slice(0, 8)}`;
  const issued = await createWorkspaceKey(workspaceId, { email: `${local}@example.com`, role });
  return { key: issued.apiKey, userId: issued.userId, name: local };
}

/** An organization with a webpage markup and a thread opened by the workspace key (an admin). */
export async function makeConversation(): Promise<{ org: Org; markup: MarkupRecord; thread: any }> {
  const org = await makeOrganization();
  const markup = await makeTypedMarkup(org, 'webpage');
  const thread = await createThread(org.workspaceKey, markup);
  return { org, markup, thread };
}

export const postMessage = (key: string, threadId: string, body: unknown) => call('POST', `/threads/${threadId}/messages`, { key, body });
export const patchMessage = (key: string, messageId: string, body: unknown) => call('PATCH', `/messages/${messageId}`, { key, body });
