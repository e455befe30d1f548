import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export class UnsafeUrlError extends Error {
  override name = 'UnsafeUrlError';
}

type Range = [base: bigint, bits: number];

const v4 = (text: string, bits: number): Range => [BigInt(text.split('.').reduce((value, part) => value * 256 + Number(part), 0)), bits];
const v6 = (text: string, bits: number): Range => [bytesToBigInt(ipv6Bytes(text)!), bits];

/**
 * IPv4 ranges that are not the public internet: every entry of IANA's IPv4 special-purpose address
 * registry (RFC 6890 and updates), whatever its "globally reachable" column says (no page a
 * renderer should load lives on an anycast relay or AS112 server), plus multicast and reserved.
 */
const BLOCKED_V4: Range[] = [
  v4('0.0.0.0', 8), // "this network" (0.0.0.0 reaches the local host on Linux)
  v4('10.0.0.0', 8), // private
  v4('100.64.0.0', 10), // carrier-grade NAT
  v4('127.0.0.0', 8), // loopback (the Lambda runtime API listens here)
  v4('169.254.0.0', 16), // link-local (cloud metadata services)
  v4('172.16.0.0', 12), // private
  v4('192.0.0.0', 24), // IETF protocol assignments
  v4('192.0.2.0', 24), // documentation
  v4('192.31.196.0', 24), // AS112
  v4('192.52.193.0', 24), // AMT
  v4('192.88.99.0', 24), // 6to4 relay anycast (deprecated)
  v4('192.168.0.0', 16), // private
  v4('192.175.48.0', 24), // AS112 direct delegation
  v4('198.18.0.0', 15), // benchmarking
  v4('198.51.100.0', 24), // documentation
  v4('203.0.113.0', 24), // documentation
  v4('224.0.0.0', 4), // multicast
  v4('240.0.0.0', 4), // reserved, and the limited broadcast address
];

/**
 * IPv6 ranges refused outright. Anything outside 2000::/3 (global unicast) is refused before these
 * are consulted, which covers ::/128, ::1, 100::/64, 5f00::/16, fc00::/7, fec0::/10, fe80::/10 and
 * ff00::/8; the forms that embed an IPv4 address are classified by it first (see `embeddedV4`).
 */
const BLOCKED_V6: Range[] = [
  v6('2001::', 23), // IETF protocol assignments: Teredo, benchmarking, ORCHID, anycast services
  v6('2001:db8::', 32), // documentation
  v6('2620:4f:8000::', 48), // AS112 direct delegation
  v6('3fff::', 20), // documentation (RFC 9637)
];

function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);
}

function inRange(value: bigint, width: number, [base, bits]: Range): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === base >> shift;
}

/** The 16 bytes of a textual IPv6 address (a trailing dotted quad allowed), or undefined. */
function ipv6Bytes(text: string): Uint8Array | undefined {
  if (isIP(text) !== 6 || text.includes('%')) return undefined;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  const hex = quad
    ? `${text.slice(0, quad.index)}${((+quad[1]! << 8) | +quad[2]!).toString(16)}:${((+quad[3]! << 8) | +quad[4]!).toString(16)}`
    : text;
  const [head = '', tail] = hex.split('::');
  const before = head ? head.split(':') : [];
  const after = tail ? tail.split(':') : [];
  const groups = tail === undefined ? before : [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    const value = parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}

/**
 * The IPv4 address an IPv6 address stands for, where the IPv6 form is only a way of reaching that
 * IPv4 host: IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96) and
 * 6to4 (2002::/16, the IPv4 address in bits 16-47).
 */
function embeddedV4(value: bigint): bigint | undefined {
  const low32 = value & 0xffffffffn;
  if (value >> 32n === 0xffffn || value >> 32n === 0n) return low32;
  if (value >> 32n === 0x0064ff9b0000000000000000n) return low32;
  if (value >> 112n === 0x2002n) return (value >> 80n) & 0xffffffffn;
  return undefined;
}

function isPrivateV4(value: bigint): boolean {
  return BLOCKED_V4.some((range) => inRange(value, 32, range));
}

/**
 * Normalises any textual address form a URL or resolver can produce: IPv4 in decimal, octal, hex
 * or shortened forms and with a trailing dot (WHATWG URL's host parser), IPv6 with or without
 * brackets. Undefined for anything that is not an address.
 */
export function parseAddress(text: string): { family: 4 | 6; value: bigint } | undefined {
  const bare = text.replace(/^\[(.*)\]$/, '$1');
  const bytes = ipv6Bytes(bare);
  if (bytes) return { family: 6, value: bytesToBigInt(bytes) };
  if (bare.includes(':') || bare.includes('%')) return undefined;
  let host: string;
  try {
    host = new URL(`http://${bare}/`).hostname;
  } catch {
    return undefined;
  }
  if (isIP(host) !== 4) return undefined;
  return { family: 4, value: v4(host, 32)[0] };
}

/**
 * True for any address that is not a public unicast address, in any notation; an address that
 * embeds an IPv4 address is judged by that IPv4 address. Unparseable input counts as private.
 */
export function isPrivateAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return true;
  if (parsed.family === 4) return isPrivateV4(parsed.value);
  const embedded = embeddedV4(parsed.value);
  if (embedded !== undefined) return isPrivateV4(embedded);
  if (parsed.value >> 125n !== 1n) return true; // outside 2000::/3 global unicast
  return BLOCKED_V6.some((range) => inRange(parsed.value, 128, range));
}

/** True for loopback in any notation (127/8, ::1 and IPv6 forms embedding 127/8). */
export function isLoopbackAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (!parsed) return false;
  const value = parsed.family === 4 ? parsed.value : parsed.value === 1n ? 0x7f000001n : embeddedV4(parsed.value);
  return value !== undefined && value >> 24n === 127n;
}

/** Which addresses a server-side fetch may connect to. */
export type AddressPolicy = (address: string) => boolean;

/** Deployed: public unicast only. The local stack also allows loopback, where its test sites live. */
export function addressPolicy(mode: 'local' | 'aws'): AddressPolicy {
  return mode === 'local' ? (address) => !isPrivateAddress(address) || isLoopbackAddress(address) : (address) => !isPrivateAddress(address);
}

export type Resolve = (host: string) => Promise<string[]>;

/** The system resolver, every address it knows for the name, in its own order. */
export const systemResolve: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map(({ address }) => address);

/**
 * The one address to connect to for `host` (a name or an address literal in any notation; IPv4
 * preferred): the name is resolved once, and every address it resolves to must pass `allowed`, so
 * the caller connects to exactly the address that was checked and a second resolution (DNS
 * rebinding) cannot redirect it. Throws UnsafeUrlError, which names the host but never an address
 * it resolved to (DESIGN.md "Problems name only what the caller may see").
 */
export async function pinAddress(host: string, allowed: AddressPolicy, resolve: Resolve = systemResolve): Promise<string> {
  const bare = host.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  const literal = parseAddress(bare);
  const addresses = literal
    ? [bare]
    : await resolve(bare).catch(() => {
        throw new UnsafeUrlError(`The host ${host} could not be resolved.`);
      });
  if (addresses.length === 0) throw new UnsafeUrlError(`The host ${host} could not be resolved.`);
  const blocked = addresses.find((address) => !allowed(address));
  // Never the address itself: the message reaches the delivery log, thumbnails and logs, and an
  // address a name resolved to inside the service's network is not the caller's to see.
  if (blocked) throw new UnsafeUrlError(`The host ${host} resolves to a private, loopback or link-local address.`);
  // IPv4 first: Lambda's network (like many) has no IPv6 egress, and every address passed the check.
  const parsed = addresses.map((address) => ({ address, ...parseAddress(address)! }));
  const chosen = parsed.find((entry) => entry.family === 4) ?? parsed[0]!;
  return chosen.family === 4 ? numberToV4(chosen.value) : chosen.address;
}

function numberToV4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/**
 * Refuses URLs that are not http(s) or whose host resolves to any non-public address, so a
 * server-side fetch or render cannot be pointed at the stack's own network (SSRF). Every address
 * the name resolves to is checked, not just the first.
 */
export async function assertPublicUrl(
  raw: string,
  resolve: Resolve = systemResolve,
  allowed: AddressPolicy = addressPolicy('aws'),
): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError(`Not a valid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UnsafeUrlError(`Only http and https URLs can be rendered (got ${url.protocol}).`);
  await pinAddress(url.hostname, allowed, resolve);
  return url;
}
