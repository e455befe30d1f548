import { describe, expect, it } from 'vitest';
import { addressPolicy, assertPublicUrl, isPrivateAddress, pinAddress } from '../../shared/render/url-safety.js';

/** A resolver that calls every name public: a refusal can then only come from the literal's own classification. */
const resolveToPublic = async () => ['93.184.216.34'];

describe('the deployed renderer refuses private, loopback and link-local addresses (no SSRF)', () => {
  it.each([
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
  ])('treats %s as private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('treats %s as public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('refuses a name that resolves to a private address among public ones, without naming the address', async () => {
    const resolve = async () => ['8.8.8.8', '10.0.0.7'];

    const refusal = await assertPublicUrl('https://sneaky.example/', resolve).catch((error: Error) => error);
    expect(refusal).toBeInstanceOf(Error);
    expect((refusal as Error).message).toBe('The host sneaky.example resolves to a private, loopback or link-local address.');
  });

  it('refuses literal private hosts, other schemes and garbage, and accepts a public host', async () => {
    await expect(assertPublicUrl('http://127.0.0.1:9001/2018-06-01/runtime/invocation/next')).rejects.toThrow(/loopback/);
    await expect(assertPublicUrl('http://[::1]/')).rejects.toThrow();
    await expect(assertPublicUrl('file:///etc/passwd')).rejects.toThrow(/http/);
    await expect(assertPublicUrl('not a url')).rejects.toThrow(/valid/);
    await expect(assertPublicUrl('https://example.com/page', resolveToPublic)).resolves.toBeInstanceOf(URL);
  });
});

describe('every notation of a private address is refused (issue 18, item 8)', () => {
  it.each([
    ['IPv4-mapped metadata', '[::ffff:169.254.169.254]'],
    ['IPv4-mapped loopback', '[::ffff:127.0.0.1]'],
    ['IPv4-mapped metadata, hex', '[::ffff:a9fe:a9fe]'],
    ['IPv4-mapped loopback, hex', '[::ffff:7f00:1]'],
    ['IPv4-mapped, expanded', '[0:0:0:0:0:ffff:7f00:1]'],
    ['NAT64 of loopback', '[64:ff9b::7f00:1]'],
    ['NAT64 of metadata, dotted', '[64:ff9b::169.254.169.254]'],
    ['local-use NAT64', '[64:ff9b:1::a00:1]'],
    ['6to4 embedding 127.0.0.1', '[2002:7f00:1::]'],
    ['6to4 embedding 10.0.0.1', '[2002:a00:1::1]'],
    ['Teredo', '[2001:0:4136:e378:8000:63bf:3fff:fdd2]'],
    ['Teredo embedding loopback', '[2001:0:7f00:1::]'],
    ['IPv4-compatible loopback', '[::127.0.0.1]'],
    ['IPv4-compatible, hex', '[::7f00:1]'],
    ['decimal', '2130706433'],
    ['octal', '0177.0.0.1'],
    ['hex, short', '0x7f.1'],
    ['hex, whole', '0x7f000001'],
    ['short', '127.1'],
    ['trailing dot', '127.0.0.1.'],
    ['metadata, decimal', '2852039166'],
    ['unspecified', '0.0.0.0'],
    ['unspecified, short', '0'],
    ['IPv4 multicast', '239.255.255.250'],
    ['IPv6 multicast', '[ff02::1]'],
    ['CGNAT low end', '100.64.0.0'],
    ['CGNAT high end', '100.127.255.255'],
    ['IETF protocol assignments', '192.0.0.8'],
    ['6to4 relay anycast', '192.88.99.1'],
    ['AS112', '192.31.196.1'],
    ['benchmarking', '198.19.255.1'],
    ['IPv6 documentation', '[2001:db8::1]'],
    ['IPv6 documentation (RFC 9637)', '[3fff::1]'],
    ['IPv6 benchmarking', '[2001:2::1]'],
    ['discard-only', '[100::1]'],
    ['site-local (deprecated)', '[fec0::1]'],
    ['SRv6 SIDs', '[5f00::1]'],
    ['unique local', '[fc00::1]'],
  ])('%s: http://%s/', async (_form, host) => {
    await expect(assertPublicUrl(`http://${host}/`, resolveToPublic)).rejects.toThrow(/private, loopback or link-local/);
    expect(isPrivateAddress(host)).toBe(true);
  });

  it.each([
    ['NAT64 of 8.8.8.8', '64:ff9b::808:808'],
    ['6to4 of 8.8.8.8', '2002:808:808::1'],
    ['IPv4-mapped 8.8.8.8, hex', '::ffff:808:808'],
    ['just past CGNAT', '100.128.0.1'],
    ['global unicast', '2a00:1450:4001:80b::200e'],
  ])('still treats %s (%s) as public', (_form, address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('refuses names with a trailing dot that resolve privately, and zone-scoped addresses', async () => {
    const resolve = async (host: string) => (host === 'metadata.internal' ? ['169.254.169.254'] : ['93.184.216.34']);

    await expect(assertPublicUrl('http://metadata.internal./latest/meta-data/', resolve)).rejects.toThrow(
      /^The host metadata\.internal\. resolves to a private, loopback or link-local address\.$/,
    );
    expect(isPrivateAddress('fe80::1%eth0')).toBe(true);
    expect(isPrivateAddress('not-an-address')).toBe(true);
  });

  it('pins the one address it checked, normalised, so the caller connects to exactly that', async () => {
    let lookups = 0;
    const rebinding = async () => (lookups++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']);

    await expect(pinAddress('rebind.example', addressPolicy('aws'), rebinding)).resolves.toBe('93.184.216.34');
    await expect(pinAddress('0x5d.0xb8.0xd8.0x22', addressPolicy('aws'), rebinding)).resolves.toBe('93.184.216.34');
    expect(lookups).toBe(1);
    await expect(pinAddress('dual.example', addressPolicy('aws'), async () => ['2606:4700:4700::1111', '1.1.1.1'])).resolves.toBe(
      '1.1.1.1',
    );
  });

  it('allows loopback on the local stack only, never the metadata service or private networks', () => {
    const local = addressPolicy('local');
    const deployed = addressPolicy('aws');

    expect([local('127.0.0.1'), local('::1'), local('::ffff:7f00:1')]).toEqual([true, true, true]);
    expect([local('169.254.169.254'), local('10.0.0.1'), local('::ffff:a9fe:a9fe')]).toEqual([false, false, false]);
    expect([deployed('127.0.0.1'), deployed('::1'), deployed('8.8.8.8')]).toEqual([false, false, true]);
  });
});
