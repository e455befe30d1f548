import type { EventType } from '../../db/events.js';
import { addressPolicy, isLoopbackAddress, parseAddress } from '../../render/url-safety.js';
import type { Checked } from '../installations/input.js';
import type { WEBHOOK_EVENT_TYPES } from '../../schemas/webhooks.js';

// The API's list of event types is exactly the events the service records: a type added to either
// without the other fails to compile here.
const everyTypeListed: [
  Exclude<EventType, (typeof WEBHOOK_EVENT_TYPES)[number]>,
  Exclude<(typeof WEBHOOK_EVENT_TYPES)[number], EventType>,
] extends [never, never]
  ? true
  : never = true;
void everyTypeListed;

const LOOPBACK_NAMES = /^(localhost|[a-z0-9-]+(\.[a-z0-9-]+)*\.localhost)$/;

/**
 * A registration's `url`. Deployed (`aws`): https only, and a host written as an address must be a
 * public unicast one (no private, loopback, link-local or metadata literals, in any notation), nor
 * `localhost`. Locally: https anywhere the local address policy admits, and http to loopback only
 * (where the tests' receivers listen). Names are resolved and checked at each delivery attempt,
 * not here: a name's answer can change after registration.
 */
export function checkWebhookUrl(text: string, mode: 'local' | 'aws'): Checked {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'must be an absolute https URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: `must be an https URL (got ${url.protocol})` };
  if (url.username || url.password) return { problem: 'must not carry a user name or password' };
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  const literal = parseAddress(host) !== undefined;
  const loopback = literal ? isLoopbackAddress(host) : LOOPBACK_NAMES.test(host);
  if (url.protocol === 'http:' && !(mode === 'local' && loopback)) {
    return {
      problem: mode === 'local' ? 'must be an https URL (http only to a loopback host in the local stack)' : 'must be an https URL',
    };
  }
  if (literal ? !addressPolicy(mode)(host) : loopback && mode === 'aws') {
    return { problem: `must not point at a private, loopback, link-local or metadata address (${url.hostname})` };
  }
  return { value: text };
}

/** Event types without repeats, in the order first given. */
export function distinctEventTypes(types: readonly EventType[]): EventType[] {
  return [...new Set(types)];
}
