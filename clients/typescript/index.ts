import createClient from 'openapi-fetch';
import type { ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.generated.js';

export type { components, operations, paths } from './schema.generated.js';

/** The one API version the service speaks; every request names it. */
export const API_VERSION = '2023-02-22';

/** A refusal as the service sends it: `application/problem+json` (RFC 9457), the `error` of a call that failed. */
export type Problem = components['schemas']['Problem'];

export interface ReviewBoardClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The service's origin, such as `http://127.0.0.1:4000` locally; paths carry `/api/v2`. */
  baseUrl: string;
  /** An API key or an exchange token, sent as `Authorization: Bearer <credential>`. */
  credential?: string;
}

/**
 * A typed client of the Review Board Service: openapi-fetch over the types openapi-typescript makes
 * of the OpenAPI document (`npm run client:generate`). Paths, parameters, bodies and answers are
 * typed per operation; a success is `{ data }` (the service's envelope inside), a problem `{ error }`
 * (RFC 9457).
 */
export function createReviewBoardClient({ baseUrl, credential, headers, ...options }: ReviewBoardClientOptions) {
  return createClient<paths>({
    baseUrl,
    ...options,
    headers: { 'Service-API-Version': API_VERSION, ...(credential ? { Authorization: `Bearer ${credential}` } : {}), ...headers },
  });
}

export type ReviewBoardClient = ReturnType<typeof createReviewBoardClient>;
