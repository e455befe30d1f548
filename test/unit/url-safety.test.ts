import { describe, expect, it } from 'vitest';
import { assertPublicUrl, isPrivateAddress } from '../../shared/render/url-safety.js';

describe('the deployed renderer refuses private, loopback and link-local addresses (no SSRF)', () => {
  it.each([
    '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254',
    '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1',
  ])('treats %s as private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('treats %s as public', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('refuses a name that resolves to a private address among public ones', async () => {
    const resolve = async () => [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.7', family: 4 }];

    await expect(assertPublicUrl('https://sneaky.example/', resolve as never)).rejects.toThrow(/10\.0\.0\.7/);
  });

  it('refuses literal private hosts, other schemes and garbage, and accepts a public host', async () => {
    const publicResolve = async () => [{ address: '93.184.216.34', family: 4 }];

    await expect(assertPublicUrl('http://127.0.0.1:9001/2018-06-01/runtime/invocation/next')).rejects.toThrow(/loopback/);
    await expect(assertPublicUrl('http://[::1]/')).rejects.toThrow();
    await expect(assertPublicUrl('file:///etc/passwd')).rejects.toThrow(/http/);
    await expect(assertPublicUrl('not a url')).rejects.toThrow(/valid/);
    await expect(assertPublicUrl('https://example.com/page', publicResolve as never)).resolves.toBeInstanceOf(URL);
  });
});
