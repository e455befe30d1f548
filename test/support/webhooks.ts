import { expect } from 'vitest';
import type { WebhookRegistration } from '../../shared/domain/webhooks/registrations.js';
import { call } from './api.js';

/** A loopback URL nothing listens on: registrations accept it locally, and nothing is delivered in these tests. */
export const LOOPBACK_HOOK_URL = 'http://127.0.0.1:9/hook';

/** Creates a registration through the API (200 expected) and answers it. */
export async function createWebhookRegistration(key: string, body: Record<string, unknown> = {}): Promise<WebhookRegistration> {
  const response = await call('POST', '/webhook-registrations', { key, body: { url: LOOPBACK_HOOK_URL, ...body } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data as WebhookRegistration;
}
