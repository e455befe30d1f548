import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { call, type ApiResponse } from './api.js';
import { pngBytes, uploadFile } from './uploads.js';

/** An external id no other test uses. */
export const newExternalId = (prefix = 'customer') => `${prefix}-${randomUUID()}`;

const path = (externalId: string) => `/users/external/${encodeURIComponent(externalId)}`;

export const createExternalUser = (key: string, body: Record<string, unknown>, query?: Record<string, string>) =>
  call('POST', '/users/external', { key, body, query });
export const getExternalUser = (key: string, externalId: string, query?: Record<string, string>) =>
  call('GET', path(externalId), { key, query });
export const patchExternalUser = (key: string, externalId: string, body: Record<string, unknown>, query?: Record<string, string>) =>
  call('PATCH', path(externalId), { key, body, query });
export const deleteExternalUser = (key: string, externalId: string, query?: Record<string, string>) =>
  call('DELETE', path(externalId), { key, query });

/** GET /users/external/:externalId, 200 asserted: the external user as read. */
export async function readExternalUserBack(key: string, externalId: string, query?: Record<string, string>): Promise<Record<string, any>> {
  const response = await getExternalUser(key, externalId, query);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data;
}

/** A write DESIGN lists as 204 with no body (POST and PATCH /users/external among them): asserts exactly that. */
export function expectNoContent(response: ApiResponse): void {
  expect(response.status, JSON.stringify(response.body)).toBe(204);
  expect(response.body).toBe('');
}

/** POST /users/external, 204 asserted, then read back with GET: the external user as stored. */
export async function makeExternalUser(key: string, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const externalId = newExternalId();
  expectNoContent(await createExternalUser(key, { externalId, ...body }));
  return readExternalUserBack(key, externalId);
}

/** An `external_user_avatar` upload for `externalId` (confirmed unless `confirm: false`). */
export async function uploadAvatar(key: string, externalId: string, options: { confirm?: boolean; workspaceId?: string } = {}) {
  return uploadFile(
    key,
    {
      bytes: await pngBytes(),
      filename: 'avatar.png',
      contentType: 'image/png',
      resourceType: 'external_user_avatar',
      resourceId: externalId,
    },
    options,
  );
}
