import { describe, expect, it } from 'vitest';
import { viewerAddressOf, withoutOriginProof } from '../../shared/http/viewer-address.js';

const PROOF = 'p'.repeat(48);
const EDGE = '130.176.1.2';

describe("the caller's address behind the distribution (shared/http/viewer-address.ts)", () => {
  it("takes X-Viewer-Address, IPv4 or IPv6, when the request carries the deployment's X-Origin-Verify", () => {
    expect(viewerAddressOf({ 'x-origin-verify': PROOF, 'x-viewer-address': '203.0.113.7' }, EDGE, PROOF)).toBe('203.0.113.7');
    expect(viewerAddressOf({ 'x-origin-verify': PROOF, 'x-viewer-address': ' 2001:db8::7 ' }, EDGE, PROOF)).toBe('2001:db8::7');
  });

  it('keeps the source IP without the proof, with a wrong one, or when nothing may be trusted (no ORIGIN_VERIFY)', () => {
    expect(viewerAddressOf({ 'x-viewer-address': '203.0.113.7' }, EDGE, PROOF)).toBe(EDGE);
    expect(viewerAddressOf({ 'x-origin-verify': `${PROOF}x`, 'x-viewer-address': '203.0.113.7' }, EDGE, PROOF)).toBe(EDGE);
    expect(viewerAddressOf({ 'x-origin-verify': PROOF.slice(1), 'x-viewer-address': '203.0.113.7' }, EDGE, PROOF)).toBe(EDGE);
    expect(viewerAddressOf({ 'x-origin-verify': '', 'x-viewer-address': '203.0.113.7' }, EDGE, PROOF)).toBe(EDGE);
    expect(viewerAddressOf({ 'x-origin-verify': PROOF, 'x-viewer-address': '203.0.113.7' }, EDGE, undefined)).toBe(EDGE);
    expect(viewerAddressOf({ 'x-origin-verify': '', 'x-viewer-address': '203.0.113.7' }, EDGE, '')).toBe(EDGE);
  });

  it('keeps the source IP when the proven header is missing or is not an IP address (never a free-form rate-limit key)', () => {
    expect(viewerAddressOf({ 'x-origin-verify': PROOF }, EDGE, PROOF)).toBe(EDGE);
    for (const claimed of ['', 'somebody', '203.0.113.7:443', '203.0.113.7, 198.51.100.1', '999.1.1.1']) {
      expect(viewerAddressOf({ 'x-origin-verify': PROOF, 'x-viewer-address': claimed }, EDGE, PROOF), claimed).toBe(EDGE);
    }
  });

  it('hands operations the headers without the proof', () => {
    expect(withoutOriginProof({ 'x-origin-verify': PROOF, 'x-viewer-address': '203.0.113.7', authorization: 'Bearer k' })).toEqual({
      'x-viewer-address': '203.0.113.7',
      authorization: 'Bearer k',
    });
  });
});
