import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { call, type ApiResponse } from './api.js';
import { pngBytes, uploadFile } from './uploads.js';

/** An external id no other test uses. */
export const newExternalId = (prefix = 'customer') => `${prefix}-${randomUUID()}`;

const path = (externalId: string) => `/users/external/${encodeURIComponent(externalId)}`;

export const createExternalUser = (key: string, body: Record<string, unknown>, query?: Record<string, string>) =>
  call('POST', '/users/external', { key, body, query });
export const getExternalUser = (key: string, externalId: string, query?: Record<string, string>) => call('GET', path(externalId), { key, query });
export const patchExternalUser = (key: string, externalId: string, body: Record<string, unknown>, query?: Record<string, string>) =>
  call('PATCH', path(externalId), { key, body, query });
export const deleteExternalUser = (key: string, externalId: string, query?: Record<string, string>) => call('DELETE', path(externalId), { key, query });

/** POST /users/external, 200 asserted: the external user as answered. */
export async function makeExternalUser(key: string, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const response: ApiResponse = await createExternalUser(key, { externalId: newExternalId(), ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** An `external_user_avatar` upload for `externalId` (confirmed unless `confirm: false`). */
export async function uploadAvatar(key: string, externalId: string, options: { confirm?: boolean; workspaceId?: string } = {}) {
  return uploadFile(key, { bytes: await pngBytes(), filename: 'avatar.png', contentType: 'image/png', resourceType: 'external_user_avatar', resourceId: externalId }, options);
}
