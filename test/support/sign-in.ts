import { randomBytes, randomInt } from 'node:crypto';
import { request } from 'node:http';
import { inject } from 'vitest';
import { hashSignInCode, insertSignInCode, setSignInCodeExpiry } from '../../shared/db/sign-in.js';
import { getUser } from '../../shared/db/users.js';
import { SIGN_IN_CODE_TTL_MS } from '../../shared/domain/sign-in/email-sign-in.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER } from '../../shared/http/viewer-address.js';
import { currentStack, VERSION, type ApiResponse, type RequestOptions } from './api.js';
import { deliveredTo } from './members.js';
import { eventually } from './polling.js';

/**
 * A loopback address of the test's own (127.x.y.z): the gateway sees it as the request's source
 * IP, as API Gateway sees a caller's, so each test has its own per-IP sign-in budget.
 */
export const newSourceIp = () => `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/** `call` (test/support/api.ts) sent from `sourceIp`, a loopback address: the request's source IP as the gateway sees it. */
export async function callFrom<T = any>(
  sourceIp: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const { stack } = currentStack();
  const url = new URL(`/api/v2${path}`, stack.baseUrl);
  for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { 'Service-API-Version': VERSION, ...options.headers };
  if (options.key) headers.Authorization = `Bearer ${options.key}`;
  const body = options.body !== undefined ? JSON.stringify(options.body) : options.rawBody;
  if (options.body !== undefined) headers['Content-Type'] ??= 'application/json';
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers, localAddress: sourceIp }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        const parsed = text && /json/.test(response.headers['content-type'] ?? '') ? JSON.parse(text) : text;
        resolve({ status: response.statusCode ?? 0, headers: responseHeaders, body: parsed as T });
      });
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** POST /auth/email-sign-in from `sourceIp`; `key` is sent as Authorization when given (the route takes none). */
export const askSignIn = (sourceIp: string, email: unknown, key?: string | null) =>
  callFrom(sourceIp, 'POST', '/auth/email-sign-in', { key, body: { email } });
export const verifySignIn = (sourceIp: string, code: unknown, key?: string | null) =>
  callFrom(sourceIp, 'POST', '/auth/email-sign-in/verify', { key, body: { code } });

/** A viewer's address of the test's own (198.18.0.0/15, never a loopback address the gateway could see). */
export const newViewerIp = () => `198.${randomInt(18, 20)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;

/**
 * POST /auth/email-sign-in as the web stack's distribution forwards it: from the edge's address
 * `edgeIp`, naming the viewer in X-Viewer-Address, with `proof` as X-Origin-Verify (the run's
 * ORIGIN_VERIFY unless given; null: none, as a caller that bypasses the distribution sends it).
 */
export function askSignInThroughEdge(edgeIp: string, viewerIp: string, email: unknown, proof: string | null = inject('originVerify')) {
  const headers: Record<string, string> = {
    [VIEWER_ADDRESS_HEADER]: viewerIp,
    ...(proof === null ? {} : { [ORIGIN_VERIFY_HEADER]: proof }),
  };
  return callFrom(edgeIp, 'POST', '/auth/email-sign-in', { body: { email }, headers });
}

/** A code issued for `userId` straight into the table (as a sign-in email would carry), for tests that verify many. */
export async function issueSignInCode(userId: string): Promise<string> {
  const user = await getUser(userId);
  if (!user?.email) throw new Error(`User ${userId} has no email to sign in with.`);
  const code = randomBytes(32).toString('base64url');
  await insertSignInCode(hashSignInCode(code), {
    userId,
    email: user.email,
    createdAt: Date.now(),
    expiresAt: Date.now() + SIGN_IN_CODE_TTL_MS,
  });
  return code;
}

/** The sign-in links the SES emulator holds for `email`, oldest first, waiting up to `timeoutMs` for `count` of them. */
export async function signInLinks(email: string, count = 1, timeoutMs = 10_000): Promise<URL[]> {
  const links = async () =>
    (await deliveredTo(email))
      .filter((delivered) => delivered.subject === 'Your Review Board sign-in link')
      .sort((a, b) => a.at - b.at)
      .flatMap((delivered) =>
        [...(delivered.body.text ?? '').matchAll(/https?:\/\/\S+\/sign-in\?code=\S+/g)].map((match) => new URL(match[0])),
      );
  return eventually(links, (found) => found.length >= count, timeoutMs);
}

/** The code of a sign-in link. */
export const codeOf = (link: URL) => link.searchParams.get('code')!;

/** Asks for a link for `email` from `sourceIp` and answers its code (the newest link in the emulator). */
export async function signInCodeFor(email: string, sourceIp = newSourceIp()): Promise<string> {
  const before = (await signInLinks(email, 0)).length;
  const asked = await askSignIn(sourceIp, email);
  if (asked.status !== 202) throw new Error(`POST /auth/email-sign-in: ${asked.status} ${JSON.stringify(asked.body)}`);
  const links = await signInLinks(email, before + 1);
  if (links.length <= before) throw new Error(`No sign-in link reached ${email}`);
  return codeOf(links.at(-1)!);
}

/** Signs `email` in through the link in the SES emulator; answers the session token and its user. */
export async function signIn(
  email: string,
  sourceIp = newSourceIp(),
): Promise<{ sessionToken: string; expiresAt: string; user: { id: string; email: string; name: string } }> {
  const verified = await verifySignIn(sourceIp, await signInCodeFor(email, sourceIp));
  if (verified.status !== 200) throw new Error(`POST /auth/email-sign-in/verify: ${verified.status} ${JSON.stringify(verified.body)}`);
  return verified.body.data;
}

/** Ages a stored sign-in code past its expiry (no 15-minute wait). */
export const expireSignInCode = (code: string) => setSignInCodeExpiry(hashSignInCode(code), Date.now() - 1000);

/**
 * Sign-in limits count in fixed windows (quarter hours): a test that must see a limit reached runs
 * with at least `marginMs` of its window left, else it first waits for the next window to begin
 * (polling the clock), so a window's boundary never splits its requests.
 */
export async function clearOfWindowEdge(windowMs: number, marginMs = 15_000): Promise<void> {
  const boundary = Date.now() - (Date.now() % windowMs) + windowMs;
  if (boundary - Date.now() >= marginMs) return;
  while (Date.now() < boundary) await new Promise((resolve) => setTimeout(resolve, Math.min(1000, boundary - Date.now() + 1)));
}
