import { sdkExchange, sdkExchangeResult } from '../../shared/domain/sign-in/sdk-exchange.js';
import { ok, operation } from '../../shared/http/route.js';
import { SdkExchangeBody, SdkExchangeResultQuery, SdkExchangeSchema } from './sdk-schemas.js';

export const sdkExchangeOperation = operation({
  operationId: 'sdkExchange',
  summary: 'Exchange an SDK token',
  description:
    'Exchanges an identity-provider access token for an SDK-scoped exchange token bound to one markup. ' +
    "No API key: send the identity provider's access token as `Authorization: Bearer` (RS256 or ES256, verified against the " +
    "provider's JWK set, its issuer and audience). `sdkOrigin` must be an origin the installation admits (its `allowedOrigins`; " +
    "without them, the origin of its `url`). The end user (`sub`) becomes the workspace's external user and contributes on " +
    '`markupId`. With `state` (an unguessable nonce of 16 to 256 characters), the answer is also kept for two minutes for ' +
    '`GET /auth/sdk-exchange/result`. An exchange token cannot be exchanged.',
  auth: 'none',
  body: SdkExchangeBody,
  responses: [
    { status: 200, description: 'The exchange token', schema: SdkExchangeSchema },
    {
      status: 401,
      description: 'The identity-provider token does not verify (algorithm, signature, iss, aud, sub, exp), or is an exchange token',
    },
    {
      status: 403,
      description:
        "The installation does not admit sdkOrigin, markupId is not a markup of its workspace, or the provider's sub names an end user of another source (an installation's or an API-made one); nothing changes",
    },
    { status: 404, description: 'No installation has this publicKey' },
    { status: 409, description: 'state was used by an earlier exchange' },
    { status: 503, description: 'No identity provider is configured, or its key set cannot be fetched' },
  ],
  handle: async ({ body, headers }) => ok(await sdkExchange(headers.authorization, body)),
});

export const sdkExchangeResultOperation = operation({
  operationId: 'getSdkExchangeResult',
  summary: 'Get an SDK exchange result',
  description:
    'Collects, once, the answer of an SDK exchange made with a `state`. ' +
    'No credential: the unguessable `state` authorizes the call, with `publicKey` and `markupId` as sent to the exchange, from ' +
    "the page on its `sdkOrigin` (the browser's `Origin` header). The answer is delivered once, within two minutes; every other " +
    'call gets the same 404.',
  auth: 'none',
  query: SdkExchangeResultQuery,
  responses: [
    { status: 200, description: 'The exchange token, as the exchange answered it', schema: SdkExchangeSchema },
    { status: 403, description: 'The request carries no browser Origin' },
    { status: 404, description: 'Nothing waits under this state for this publicKey, markupId and origin (used, expired or never made)' },
  ],
  handle: async ({ query, headers }) => ok(await sdkExchangeResult(headers.origin, query)),
});

/** The SDK exchange routes, for the auth group's route table. */
export const sdkRoutes = {
  'POST /api/v2/auth/sdk-exchange': sdkExchangeOperation,
  'GET /api/v2/auth/sdk-exchange/result': sdkExchangeResultOperation,
} as const;
