import type { EventType } from '../../db/events.js';
import { addressPolicy, isLoopbackAddress, parseAddress } from '../../render/url-safety.js';
import type { Checked } from '../installations/input.js';

/** Every event type a registration may name (spec Events; DESIGN "Which operation emits which event"), in the spec's order. */
export const WEBHOOK_EVENT_TYPES = [
  'comment_created',
  'comment_updated',
  'comment_screenshot_failed',
  'comment_resolved',
  'comment_unresolved',
  'markup_created',
  'markup_ready',
  'comment_reply_created',
  'markup_status_changed',
  'set_project_read_only',
  'project_review_created',
] as const satisfies readonly EventType[];

// A type added to EventType without being added above fails to compile here.
const everyTypeListed: Exclude<EventType, (typeof WEBHOOK_EVENT_TYPES)[number]> extends never ? true : never = true;
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
