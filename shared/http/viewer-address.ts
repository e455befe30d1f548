import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * Who is calling, as an address: what per-address rate limits count (POST /auth/email-sign-in).
 *
 * Deployed behind the web stack's CloudFront distribution, API Gateway's `sourceIp` is a CloudFront
 * edge address that many viewers share. The distribution's `/api/*` behaviour therefore sets
 * `X-Viewer-Address` to the address CloudFront saw (a viewer-request CloudFront Function, replacing
 * any value the viewer sent) and adds `X-Origin-Verify` with the deployment's own random value (a
 * Secrets Manager secret, handed to the functions as `ORIGIN_VERIFY`). The default execute-api
 * endpoint stays reachable, and anyone can send both headers to it: the viewer address is taken only
 * when the proof matches, else the source IP API Gateway saw is the caller's address.
 */
export const VIEWER_ADDRESS_HEADER = 'X-Viewer-Address';
export const ORIGIN_VERIFY_HEADER = 'X-Origin-Verify';

const same = (given: string, expected: string): boolean => {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * The caller's address: the distribution's `X-Viewer-Address` when the request carries this
 * deployment's `X-Origin-Verify` (and the address is an IP address), else `sourceIp`. Without an
 * `originVerify` value (the local stack, a deployment without the web stack) no header is trusted.
 * `headers` are lower-cased.
 */
export function viewerAddressOf(headers: Record<string, string | undefined>, sourceIp: string, originVerify: string | undefined): string {
  if (!originVerify) return sourceIp;
  const proof = headers[ORIGIN_VERIFY_HEADER.toLowerCase()];
  if (proof === undefined || !same(proof, originVerify)) return sourceIp;
  const claimed = headers[VIEWER_ADDRESS_HEADER.toLowerCase()]?.trim();
  return claimed && isIP(claimed) ? claimed : sourceIp;
}

/** The request's headers without the proof: no operation sees (or could echo) the deployment's value. */
export function withoutOriginProof(headers: Record<string, string | undefined>): Record<string, string | undefined> {
  const { [ORIGIN_VERIFY_HEADER.toLowerCase()]: _proof, ...rest } = headers;
  return rest;
}
