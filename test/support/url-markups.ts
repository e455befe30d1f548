import { expect } from 'vitest';
import { call } from './api.js';

/** The fields every Markup answers with, in order. */
export const MARKUP_FIELDS = [
  'activeThreads',
  'createdAt',
  'deletedAt',
  'hasRetainedOriginal',
  'id',
  'isReady',
  'markupUrl',
  'modifiedAt',
  'name',
  'note',
  'parentFolderId',
  'projectReviews',
  'readOnly',
  'retainOriginal',
  'scopes',
  'status',
  'thumbnailUrl',
  'type',
  'url',
  'workspaceId',
];

/** A webpage markup created through POST /markups/url (200 asserted); `body` overrides the URL or adds fields. */
export async function createMarkup(key: string, body: Record<string, unknown> = {}) {
  const response = await call('POST', '/markups/url', { key, body: { url: 'https://example.com/home', ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as { id: string; name: string; parentFolderId: string; workspaceId: string; [field: string]: unknown };
}
