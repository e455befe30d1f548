import { mintExchangeToken } from '../../auth/exchange-tokens.js';
import { verifyIdentityProviderToken } from '../../auth/identity-provider.js';
import type { EndUserRole } from '../../auth/permissions.js';
import { installationOrigins } from '../../db/allowed-origins.js';
import { IDENTITY_PROVIDER_SOURCE } from '../../db/external-users.js';
import { insertSdkSession, takeSdkSession } from '../../db/sdk-sessions.js';
import { browserOrigin } from '../installations/input.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { findLiveInstallation } from './customer-exchange.js';
import { upsertExternalUserFromClaims } from '../users/external-users.js';
import { isMarkupOfWorkspace } from '../markups/access.js';

/**
 * The SDK exchange (spec: Token exchange endpoints, Authentication "SDK exchange"; DESIGN.md "SDK
 * exchange"): an end user signed in with the identity provider gets an exchange token for one
 * markup, for a client running on an origin the installation admits. With `state`, the answer is
 * also kept for the embedding page, which collects it once from that origin (`sdkExchangeResult`).
 */

/** SDK end users contribute: they open threads and reply, and edit or delete only their own. */
export const SDK_MARKUP_ROLE: EndUserRole = 'project:contributor';
/** How long an answer recorded under `state` waits to be collected. */
export const SDK_SESSION_TTL_MS = 2 * 60 * 1000;

export interface SdkExchangeAnswer {
  exchangeToken: string;
  expiresAt: string;
  workspaceId: string;
  userId: string;
  markupRole: EndUserRole;
  validatedSdkOrigin: string;
  name: string;
}

export interface SdkExchangeInput {
  publicKey: string;
  markupId: string;
  sdkOrigin: string;
  state?: string;
}

/**
 * Exchanges the bearer identity-provider token for an SDK-scoped exchange token bound to
 * `markupId`. 503 without an identity provider; 401 for the token (an exchange token too); 404 for
 * an unknown publicKey; 403 when the installation does not admit `sdkOrigin` or the markup is not
 * one of its workspace's, or when the provider's `sub` names an end user another source made (an
 * installation's, or an API-made one: DESIGN.md "Trust rules"); 409 when `state` was used before.
 */
export async function sdkExchange(authorization: string | undefined, input: SdkExchangeInput): Promise<SdkExchangeAnswer> {
  const identity = await verifyIdentityProviderToken(authorization);
  const found = await findLiveInstallation(input.publicKey);
  if (!found) throw new NotFoundError('No installation has this publicKey.');
  const { installation, workspace } = found;
  if (!installationOrigins(installation).includes(input.sdkOrigin)) {
    throw new ForbiddenError(
      `The installation does not admit the origin ${input.sdkOrigin}: list it in the installation's allowedOrigins (without them, only the origin of the installation's url is admitted).`,
      'origin-not-allowed',
    );
  }
  if (!(await isMarkupOfWorkspace(input.markupId, installation.workspaceId))) {
    throw new ForbiddenError(`Markup ${input.markupId} is not a markup of this installation's workspace.`, 'markup-out-of-scope');
  }
  const { sub, ...claims } = identity;
  const user = await upsertExternalUserFromClaims(workspace, sub, claims, IDENTITY_PROVIDER_SOURCE);
  const { token, expiresAt } = await mintExchangeToken({
    organizationId: workspace.organizationId,
    workspaceId: workspace.id,
    userId: user.userId,
    externalId: sub,
    installationId: installation.id,
    markupRole: SDK_MARKUP_ROLE,
    markupId: input.markupId,
    sdk: true,
  });
  const answer: SdkExchangeAnswer = {
    exchangeToken: token,
    expiresAt: expiresAt.toISOString(),
    workspaceId: workspace.id,
    userId: user.userId,
    markupRole: SDK_MARKUP_ROLE,
    validatedSdkOrigin: input.sdkOrigin,
    name: user.name,
  };
  if (input.state !== undefined) {
    const session = {
      publicKey: input.publicKey,
      markupId: input.markupId,
      sdkOrigin: input.sdkOrigin,
      expiresAt: Date.now() + SDK_SESSION_TTL_MS,
      answer,
    };
    if (!(await insertSdkSession(input.state, session))) {
      throw new ConflictError('This state was used by an earlier exchange; send a fresh, unguessable state.');
    }
  }
  return answer;
}

/**
 * Delivers the answer recorded under `state`, once, to the page on the recorded `sdkOrigin` (its
 * `Origin` header) for the same publicKey and markupId, within `SDK_SESSION_TTL_MS`. 403 without a
 * browser `Origin`; every other failure (unknown or used state, another origin, publicKey or
 * markupId, expiry) is the same 404, which says nothing of which check failed and consumes nothing.
 */
export async function sdkExchangeResult(
  originHeader: string | undefined,
  query: { state: string; publicKey: string; markupId: string },
): Promise<SdkExchangeAnswer> {
  const origin = browserOrigin(originHeader);
  if (!origin) {
    throw new ForbiddenError(
      'The exchange result is delivered only to the page that asked for it: call this from that page (its Origin header).',
      'origin-required',
    );
  }
  const session = await takeSdkSession<SdkExchangeAnswer>(query.state, {
    publicKey: query.publicKey,
    markupId: query.markupId,
    origin,
    now: Date.now(),
  });
  if (!session) {
    throw new NotFoundError(
      'No exchange result waits under this state for this publicKey, markupId and origin; results are delivered once, within two minutes.',
    );
  }
  return session.answer;
}
