import { authConfigOf, findLiveInstallation } from '../../shared/domain/sign-in/customer-exchange.js';
import { NotFoundError } from '../../shared/errors.js';
import { ok, operation } from '../../shared/http/route.js';
import { AuthConfigQuery, AuthConfigSchema } from './schemas.js';

export const getAuthConfigOperation = operation({
  operationId: 'getAuthConfig',
  summary: 'Get the JWT settings',
  description:
    'What a customer JWT for an installation must carry: aud, iss, algorithm, claims, lifetimes. ' +
    "No credential: the embedded client and the customer server read it with the installation's browser-safe `publicKey`. " +
    "Sign customer JWTs with RS256 and the private half of the installation's `signingKey`, with `iss` = `expectedIss`, " +
    "`aud` = `expectedAud`, `sub` = the end user's id in your system, `iat` and `exp`, at most `maxTokenLifetimeSeconds` (900) apart.",
  auth: 'none',
  query: AuthConfigQuery,
  responses: [
    { status: 200, description: "The installation's token requirements", schema: AuthConfigSchema },
    { status: 404, description: 'No installation has this publicKey' },
  ],
  handle: async ({ query }) => {
    const found = await findLiveInstallation(query.publicKey);
    if (!found) throw new NotFoundError('No installation has this publicKey.');
    return ok(authConfigOf(found.installation));
  },
});
