import { randomUUID } from 'node:crypto';
import type { Role } from '../../shared/db/users.js';
import { createWorkspaceKey } from '../../shared/domain/organizations/organizations.js';
import { call, currentStack, type ApiResponse } from './api.js';

/** A member key of `role` with its user id and (lower-case) email. */
export interface MemberKey {
  key: string;
  userId: string;
  email: string;
}

/** A workspace member acting through its own key (a verified email), with `role`. */
export async function makeMember(workspaceId: string, role: Role, label: string = role): Promise<MemberKey> {
  const email = `${label}-${randomUUID().slice(0, 8)}@example.com`;
  const issued = await createWorkspaceKey(workspaceId, { email, role });
  return { key: issued.apiKey, userId: issued.userId, email };
}

/** A fresh address no test has used. */
export const freshEmail = (label = 'invitee') => `${label}-${randomUUID().slice(0, 8)}@example.com`;

export const listUsers = (key: string, query?: Record<string, string>) => call('GET', '/users', { key, query });
export const invite = (key: string, body: unknown, query?: Record<string, string>) => call('POST', '/users/invite', { key, body, query });
export const changeRole = (key: string, userId: string, role: unknown, query?: Record<string, string>) =>
  call('PATCH', `/users/${userId}/role`, { key, body: { role }, query });
export const removeUser = (key: string, userId: string, query?: Record<string, string>) =>
  call('DELETE', `/users/${userId}`, { key, query });

/** The listed users of a successful GET /users, by email. */
export async function usersByEmail(
  key: string,
  query?: Record<string, string>,
): Promise<Map<string, { id: string; email: string; name: string; role: Role; status: string }>> {
  const response: ApiResponse = await listUsers(key, query);
  if (response.status !== 200) throw new Error(`GET /users: ${response.status} ${JSON.stringify(response.body)}`);
  return new Map(response.body.data.map((user: { email: string }) => [user.email, user]));
}

/** An email as the SES emulator stored it (`GET /store` of aws-ses-v2-local). */
export interface DeliveredEmail {
  messageId: string;
  from: string;
  replyTo: string[];
  destination: { to: string[]; cc: string[]; bcc: string[] };
  subject: string;
  body: { text?: string; html?: string };
  at: number;
}

/** Every email the local stack's SES emulator received for `to`, read over its HTTP store API. */
export async function deliveredTo(to: string): Promise<DeliveredEmail[]> {
  const { services } = currentStack();
  const response = await fetch(new URL('/store', services.endpoints.ses));
  if (!response.ok) throw new Error(`SES emulator store: ${response.status}`);
  const { emails } = (await response.json()) as { emails: DeliveredEmail[] };
  return emails.filter((email) => email.destination.to.some((address) => address.toLowerCase() === to.toLowerCase()));
}
