import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { deliverWebhook } from '../../functions/webhook-delivery/deliver.js';
import { call, makeOrganization } from '../support/api.js';
import { createWebhookRegistration } from '../support/webhooks.js';

/**
 * Issue 28 item 7 (DESIGN.md "Problems name only what the caller may see"): when a delivery's host
 * name resolves to an address the service refuses, the delivery log says so without the address.
 * The attempt runs here, in the test process, through the delivery worker's own code against the
 * local stack's table; the name resolves to private addresses by this file's resolver alone.
 */

const PRIVATE_NAMES: Record<string, string[]> = {
  'metadata.hooks.test': ['169.254.169.254'],
  'intranet.hooks.test': ['203.0.113.9', '10.20.30.40'],
  'six.hooks.test': ['fd12:3456:789a::1'],
};

vi.mock('node:dns/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns/promises')>();
  const lookup = (async (host: string, options?: unknown) => {
    const addresses = PRIVATE_NAMES[host];
    if (!addresses) return real.lookup(host, options as never);
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as typeof real.lookup;
  return { ...real, lookup, default: { ...real, lookup } };
});

describe('the webhook delivery log never shows the address a name resolved to', () => {
  it('records and answers the refusal of a private, link-local or IPv6 private target without its address', async () => {
    const org = await makeOrganization();
    for (const [host, addresses] of Object.entries(PRIVATE_NAMES)) {
      const registration = await createWebhookRegistration(org.workspaceKey, { url: `https://${host}/hook` });
      const event = { id: randomUUID(), type: 'webhook.test' as const, workspaceId: org.workspaceId, createdAt: new Date().toISOString() };

      await deliverWebhook({ type: 'deliver-webhook', registrationId: registration.id, event, attempt: 1, redelivery: true }, randomUUID());

      const log = await call('GET', `/webhook-registrations/${registration.id}/deliveries`, { key: org.workspaceKey });
      expect(log.status, JSON.stringify(log.body)).toBe(200);
      const entry = log.body.data.data.find((attempt: { eventId: string }) => attempt.eventId === event.id);
      expect(entry, JSON.stringify(log.body)).toBeDefined();
      expect(entry.statusCode).toBeNull();
      expect(entry.error).toMatch(/resolves to a private, loopback or link-local address/);
      for (const address of addresses) expect(JSON.stringify(log.body), host).not.toContain(address);
    }
  });
});
