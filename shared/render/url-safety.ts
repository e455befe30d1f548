import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
}

/** IPv4 ranges that are not the public internet (RFC 6890 special-purpose registry, abridged). */
const BLOCKED_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback (the Lambda runtime API listens here)
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4ToNumber(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function inV4Range(address: string, [base, bits]: [string, number]): boolean {
  const mask = bits === 0 ? 0 : 2 ** 32 - 2 ** (32 - bits);
  return (v4ToNumber(address) & mask) >>> 0 === (v4ToNumber(base) & mask) >>> 0;
}

/** True for any address that is not a public unicast address. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED_V4.some((range) => inV4Range(address, range));
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (mapped) return isPrivateAddress(mapped[1]!);
  if (lower === '::' || lower === '::1') return true;
  const first = parseInt(lower.split(':')[0] || '0', 16);
  if ((first & 0xfe00) === 0xfc00) return true; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((first & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/**
 * Refuses URLs that are not http(s) or whose host resolves to any non-public address, so a
 * server-side fetch or render cannot be pointed at the stack's own network (SSRF). Every address
 * the name resolves to is checked, not just the first.
 */
export async function assertPublicUrl(raw: string, resolve: typeof lookup = lookup): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(`Not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UnsafeUrlError(`Only http and https URLs can be rendered (got ${url.protocol}).`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host }] : await resolve(host, { all: true, verbatim: true }).catch(() => {
    throw new UnsafeUrlError(`The host ${host} could not be resolved.`);
  });
  const blocked = addresses.find(({ address }) => isPrivateAddress(address));
  if (blocked) throw new UnsafeUrlError(`The host ${host} resolves to a private, loopback or link-local address (${blocked.address}).`);
  return url;
}
