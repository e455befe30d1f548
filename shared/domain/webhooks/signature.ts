import { createHmac } from 'node:crypto';

/** The Standard Webhooks headers of one attempt, `content-type` included. */
export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
}

/**
 * Signs one attempt the Standard Webhooks way: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
 * keyed with the base64-decoded part of `whsec_<base64>`. `id` is the event id, the same on every
 * attempt; `timestamp` is the attempt's time in seconds, so each attempt is signed anew with the
 * registration's key of that moment.
 */
export function signWebhook(input: { id: string; timestampSeconds: number; body: string; signingKey: string }): WebhookHeaders {
  const secret = Buffer.from(input.signingKey.replace(/^whsec_/, ''), 'base64');
  const timestamp = String(Math.floor(input.timestampSeconds));
  const signature = createHmac('sha256', secret).update(`${input.id}.${timestamp}.${input.body}`).digest('base64');
  return {
    'webhook-id': input.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
    'content-type': 'application/json',
  };
}
