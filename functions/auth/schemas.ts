import * as v from 'valibot';
import { END_USER_ROLE_ORDER } from '../../shared/auth/permissions.js';

/** A publicKey as installations hand them out (`pk_` + base64url); anything else finds no installation. */
export const PublicKey = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(100, 'must be at most 100 characters'));

export const AuthConfigQuery = v.object({ publicKey: PublicKey });

export const AuthConfigSchema = v.object({
  installationId: v.string(),
  expectedAud: v.string(),
  expectedIss: v.string(),
  algorithm: v.literal('RS256'),
  requiredClaims: v.array(v.string()),
  optionalClaims: v.array(v.string()),
  markupRoles: v.array(v.picklist(END_USER_ROLE_ORDER)),
  clockToleranceSeconds: v.number(),
  /** The longest a customer JWT may live (`exp - iat`); a longer one is refused. */
  maxTokenLifetimeSeconds: v.number(),
  exchangeTokenLifetimeSeconds: v.number(),
});

/** A customer JWT; RSA-2048+ signatures and sensible claims stay far below 16 KB. */
export const ExchangeBody = v.object({
  token: v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(16_384, 'must be at most 16384 characters')),
});

export const ExchangeSchema = v.object({
  exchangeToken: v.string(),
  expiresAt: v.pipe(v.string(), v.isoTimestamp()),
  workspaceId: v.string(),
  userId: v.string(),
  markupRole: v.picklist(END_USER_ROLE_ORDER),
  markupId: v.optional(v.string()),
});
