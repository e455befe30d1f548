import { exchangeCustomerToken } from '../../shared/domain/sign-in/customer-exchange.js';
import { ok, operation } from '../../shared/http/route.js';
import { ExchangeBody, ExchangeSchema } from './schemas.js';

export const exchangeOperation = operation({
  operationId: 'exchangeToken',
  summary: 'Exchange a customer JWT',
  description:
    'Exchanges a customer-signed JWT for a short-lived exchange token of its end user. ' +
    "No API key: the customer JWT is the credential. It must be RS256-signed with the installation's key and carry what " +
    '`GET /auth/config` says (`iss`, `aud`, `sub`, `iat`, `exp`, with `exp - iat` at most 900 s; `nbf` is honoured). Optional claims: `markupRole` ' +
    '(project:viewer, project:contributor (default), project:owner) and `markupId` (binds the token to one markup), and ' +
    "`name`, `email`, `picture` for the external user `sub`, which the exchange creates or refreshes. Send the answer's " +
    '`exchangeToken` as `Authorization: Bearer` to the feedback, markup-read and upload endpoints until `expiresAt`.',
  auth: 'none',
  body: ExchangeBody,
  responses: [
    { status: 200, description: 'The exchange token', schema: ExchangeSchema },
    { status: 400, description: 'A markupRole or markupId claim of the wrong type or value' },
    {
      status: 401,
      description:
        'The JWT does not verify: algorithm, signature, iss, aud, sub, exp, nbf or iat, or it lives longer than 900 s (exp - iat)',
    },
    {
      status: 403,
      description:
        'markupId names a missing, deleted or other-workspace markup, or sub names an end user of another source (another installation, the identity provider, or an API-made user bound to another installation); nothing changes',
    },
  ],
  handle: async ({ body }) => ok(await exchangeCustomerToken(body.token)),
});
