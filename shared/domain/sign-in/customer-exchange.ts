import { decodeJwt, importSPKI, jwtVerify, type JWTPayload } from 'jose';
import { mintExchangeToken } from '../../auth/exchange-tokens.js';
import { END_USER_ROLE_ORDER, type EndUserRole } from '../../auth/permissions.js';
import { getConfig } from '../../config.js';
import { installationSource } from '../../db/external-users.js';
import { getInstallation, getInstallationByPublicKey, type InstallationRecord } from '../../db/installations.js';
import { getWorkspace, type WorkspaceRecord } from '../../db/workspaces.js';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../../errors.js';
import { isId } from '../../schemas/builders.js';
import { upsertExternalUserFromClaims } from '../users/external-users.js';
import { isMarkupOfWorkspace } from '../markups/access.js';

/**
 * The customer JWT exchange (spec: Token exchange endpoints, Authentication "Customer JWT
 * exchange"; DESIGN.md "Exchange tokens"). A customer's server signs a JWT for its end user with the
 * RSA key whose public half the installation holds; we verify it and mint our own short-lived
 * exchange token, which the embedded client then sends as `Authorization: Bearer`.
 */

/** The only algorithm a customer JWT may use (RS512, PS256, ES256, HS256 and `none` are refused). */
export const CUSTOMER_JWT_ALGORITHM = 'RS256';
/** Clock skew tolerated on `exp`, `nbf` and `iat` between the customer's clock and ours. */
export const CUSTOMER_CLOCK_TOLERANCE_SECONDS = 30;
/**
 * The longest a customer JWT may live, `exp - iat` (DESIGN.md "Trust rules": Customer JWTs). A
 * customer server signs one per page load; without a bound, one leaked JWT (or one signed with
 * `exp` in the year 3000) would mint exchange tokens forever.
 */
export const MAX_CUSTOMER_JWT_LIFETIME_SECONDS = 900;
const AUDIENCE_PREFIX = 'review-board-service:installation:';
/** Claims every customer JWT carries, and the ones read when present. */
export const REQUIRED_CLAIMS = ['iss', 'aud', 'sub', 'exp', 'iat'] as const;
export const OPTIONAL_CLAIMS = ['markupRole', 'markupId', 'name', 'email', 'picture', 'nbf'] as const;
const DEFAULT_ROLE: EndUserRole = 'project:contributor';
const MAX_EXTERNAL_ID = 255;

/** What a customer JWT must say: `aud` names the installation, `iss` its public key. */
export function expectedClaimsOf(installation: Pick<InstallationRecord, 'id' | 'publicKey'>): { expectedAud: string; expectedIss: string } {
  return { expectedAud: `${AUDIENCE_PREFIX}${installation.id}`, expectedIss: installation.publicKey };
}

/**
 * The installation a browser-safe `publicKey` names, with its workspace; undefined when none does
 * or its workspace was deleted (its installations linger until the workspace's content is cleared,
 * but are already gone). The credential-free auth routes find installations this way.
 */
export async function findLiveInstallation(
  publicKey: string,
): Promise<{ installation: InstallationRecord; workspace: WorkspaceRecord } | undefined> {
  const installation = await getInstallationByPublicKey(publicKey);
  const workspace = installation && (await getWorkspace(installation.workspaceId));
  return installation && workspace ? { installation, workspace } : undefined;
}

/** `GET /auth/config`: what a customer needs to sign JWTs for this installation. */
export function authConfigOf(installation: InstallationRecord) {
  return {
    installationId: installation.id,
    ...expectedClaimsOf(installation),
    algorithm: CUSTOMER_JWT_ALGORITHM,
    requiredClaims: [...REQUIRED_CLAIMS],
    optionalClaims: [...OPTIONAL_CLAIMS],
    markupRoles: [...END_USER_ROLE_ORDER],
    clockToleranceSeconds: CUSTOMER_CLOCK_TOLERANCE_SECONDS,
    maxTokenLifetimeSeconds: MAX_CUSTOMER_JWT_LIFETIME_SECONDS,
    exchangeTokenLifetimeSeconds: getConfig().exchangeTokenTtlSeconds,
  };
}

export interface ExchangeAnswer {
  exchangeToken: string;
  expiresAt: string;
  workspaceId: string;
  userId: string;
  markupRole: EndUserRole;
  markupId?: string;
}

const refused = (detail: string) => new UnauthorizedError(`The customer JWT was refused: ${detail}`);

/** The installation a token's `aud` names (read before verifying, to find the key to verify with). */
async function installationNamedBy(token: string): Promise<InstallationRecord> {
  let payload: JWTPayload;
  try {
    payload = decodeJwt(token);
  } catch {
    throw refused('it is not a JWT (header.payload.signature, base64url).');
  }
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  const named = audiences.find((aud): aud is string => typeof aud === 'string' && aud.startsWith(AUDIENCE_PREFIX));
  if (!named) throw refused('its aud must be the expectedAud that GET /auth/config answers for the installation.');
  const installationId = named.slice(AUDIENCE_PREFIX.length);
  const installation = isId(installationId) ? await getInstallation(installationId) : undefined;
  if (!installation) throw refused(`its aud names no installation (${named}).`);
  return installation;
}

async function verifiedPayload(token: string, installation: InstallationRecord): Promise<JWTPayload> {
  const key = await importSPKI(installation.signingKey, CUSTOMER_JWT_ALGORITHM);
  const { expectedAud, expectedIss } = expectedClaimsOf(installation);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key, {
      algorithms: [CUSTOMER_JWT_ALGORITHM],
      audience: expectedAud,
      issuer: expectedIss,
      requiredClaims: [...REQUIRED_CLAIMS],
      clockTolerance: CUSTOMER_CLOCK_TOLERANCE_SECONDS,
    }));
  } catch (error) {
    throw refused(reasonOf(error));
  }
  // jose checks that `sub` is present, not that it is a string: `"sub": null` or 42 names no end user.
  if (typeof payload.sub !== 'string' || payload.sub.trim() === '')
    throw refused("its sub must be a non-empty string (the end user's id).");
  checkLifetime(payload as JWTPayload & { iat: number; exp: number });
  return payload;
}

/**
 * `iat` is required and must not be in the future (beyond the clock tolerance): jose checks it only
 * against a maximum age, which bounds how old a token is, not how long it was made to live. The
 * lifetime `exp - iat` is bounded whatever `exp` says, so a JWT signed to expire in the year 3000
 * is refused today, not in 15 minutes. jose has already checked that both are numbers and `exp`
 * has not passed.
 */
function checkLifetime({ iat, exp }: { iat: number; exp: number }): void {
  const ahead = iat - Date.now() / 1000;
  if (ahead > CUSTOMER_CLOCK_TOLERANCE_SECONDS) {
    throw refused(
      `its iat is ${Math.ceil(ahead)} s in the future; at most ${CUSTOMER_CLOCK_TOLERANCE_SECONDS} s of clock skew is tolerated (sign with iat = now).`,
    );
  }
  const lifetime = exp - iat;
  if (lifetime > MAX_CUSTOMER_JWT_LIFETIME_SECONDS) {
    throw refused(
      `its lifetime (exp - iat) is ${lifetime} s; at most ${MAX_CUSTOMER_JWT_LIFETIME_SECONDS} s is accepted: sign a JWT per exchange that expires within 15 minutes of its iat.`,
    );
  }
}

/** A reason a customer can act on, without echoing anything of the token. */
function reasonOf(error: unknown): string {
  const code = (error as { code?: string }).code;
  const { claim, reason } = error as { claim?: string; reason?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'it has expired (exp).';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (!(claim === 'exp' || claim === 'iat' || claim === 'sub' || claim === 'iss' || claim === 'aud' || claim === 'nbf'))
        return 'a claim is not valid.';
      if (reason === 'missing') return `its ${claim} claim is missing.`;
      if (reason === 'invalid') return `its ${claim} claim must be a number of seconds since the epoch.`;
      if (claim === 'nbf')
        return `it is not valid yet: its nbf claim is in the future (more than ${CUSTOMER_CLOCK_TOLERANCE_SECONDS} s of clock skew).`;
      return `its ${claim} claim is not what GET /auth/config expects.`;
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return `it must be signed with ${CUSTOMER_JWT_ALGORITHM}.`;
    default:
      return `its signature does not verify with the installation's key (${CUSTOMER_JWT_ALGORITHM}).`;
  }
}

/** Authentication rule 2: `markupRole` is the only input to the role; absent means contributor. */
function markupRoleOf(payload: JWTPayload): EndUserRole {
  const role = payload.markupRole;
  if (role === undefined) return DEFAULT_ROLE;
  if (typeof role !== 'string' || !(END_USER_ROLE_ORDER as readonly string[]).includes(role)) {
    throw new BadRequestError(`The markupRole claim must be one of ${END_USER_ROLE_ORDER.join(', ')}.`, 'invalid-markup-role');
  }
  return role as EndUserRole;
}

/** Authentication rule 3: a bound markup must exist, live, in the installation's workspace. */
async function boundMarkupOf(payload: JWTPayload, workspaceId: string): Promise<string | undefined> {
  const markupId = payload.markupId;
  if (markupId === undefined) return undefined;
  if (typeof markupId !== 'string' || markupId.trim() === '') {
    throw new BadRequestError('The markupId claim must be a non-empty string (the id of a markup).', 'invalid-markup-id');
  }
  if (!(await isMarkupOfWorkspace(markupId, workspaceId))) {
    throw new ForbiddenError(`The markupId claim names no markup of this installation's workspace (${markupId}).`, 'markup-out-of-scope');
  }
  return markupId;
}

/** The optional profile claims, when they are strings of a sensible size (anything else is ignored). */
function profileOf(payload: JWTPayload): { name?: string; email?: string; picture?: string } {
  const text = (value: unknown, max: number) =>
    typeof value === 'string' && value.trim() !== '' && value.length <= max ? value : undefined;
  const profile = { name: text(payload.name, 200), email: text(payload.email, 254), picture: text(payload.picture, 2048) };
  return Object.fromEntries(Object.entries(profile).filter(([, value]) => value !== undefined));
}

/**
 * Verifies a customer JWT against its installation and mints an exchange token for its end user,
 * creating or refreshing the external user `sub` of this installation. 401 for anything about the
 * signature or the standard claims; 400 for a `markupRole`/`markupId` claim of the wrong type; 403
 * for a markup out of reach, or a `sub` that names another source's end user (nothing changes).
 */
export async function exchangeCustomerToken(token: string): Promise<ExchangeAnswer> {
  const installation = await installationNamedBy(token);
  const payload = await verifiedPayload(token, installation);
  const externalId = payload.sub!;
  if (externalId.length > MAX_EXTERNAL_ID) throw refused(`its sub is longer than ${MAX_EXTERNAL_ID} characters.`);
  const markupRole = markupRoleOf(payload);
  const [workspace, markupId] = await Promise.all([
    getWorkspace(installation.workspaceId),
    boundMarkupOf(payload, installation.workspaceId),
  ]);
  if (!workspace) throw refused("the installation's workspace no longer exists.");
  const user = await upsertExternalUserFromClaims(workspace, externalId, profileOf(payload), installationSource(installation.id));
  const { token: exchangeToken, expiresAt } = await mintExchangeToken({
    organizationId: workspace.organizationId,
    workspaceId: workspace.id,
    userId: user.userId,
    externalId,
    installationId: installation.id,
    markupRole,
    ...(markupId ? { markupId } : {}),
  });
  return {
    exchangeToken,
    expiresAt: expiresAt.toISOString(),
    workspaceId: workspace.id,
    userId: user.userId,
    markupRole,
    ...(markupId ? { markupId } : {}),
  };
}
