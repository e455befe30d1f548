import { ServiceError, UnauthorizedError } from '../errors.js';

/**
 * What only HTTP can get wrong (a method the path does not have, a body of another media type),
 * and the headers a problem response carries beside its body. The vocabulary itself is
 * transport-free (`shared/errors.ts`).
 */

export class MethodNotAllowedError extends ServiceError {
  constructor(readonly allowed: string[]) {
    super(405, 'method-not-allowed', 'Method Not Allowed', `This path accepts ${allowed.join(', ')}.`);
  }
}

export class UnsupportedMediaTypeError extends ServiceError {
  constructor(detail = 'Send the request body as application/json.') {
    super(415, 'unsupported-media-type', 'Unsupported Media Type', detail);
  }
}

/** The headers of `error`'s problem response: the challenge of a 401, `Allow` of a 405, `Retry-After` when a retry may succeed. */
export function problemHeaders(error: ServiceError): Record<string, string> {
  return {
    ...(error instanceof UnauthorizedError ? { 'WWW-Authenticate': 'Bearer' } : {}),
    ...(error instanceof MethodNotAllowedError ? { Allow: error.allowed.join(', ') } : {}),
    ...(error.retryAfterSeconds !== undefined ? { 'Retry-After': String(error.retryAfterSeconds) } : {}),
  };
}
