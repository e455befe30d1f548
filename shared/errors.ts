/**
 * The service's error vocabulary, free of any transport: the domain, db and auth layers throw these,
 * and each transport renders them (`shared/http/errors.ts` turns one into an RFC 9457 problem
 * response with its headers; the live socket into a refusal message). `status` is the problem's
 * status as RFC 9457 names it: the code callers switch on, whatever carries it.
 */

/** One field-level problem of a validation failure; `pointer` is a JSON Pointer into the request. */
export interface FieldProblem {
  pointer: string;
  detail: string;
}

/** Problem types are stable identifiers clients can switch on; the title is for humans. */
export const PROBLEM_TYPE_PREFIX = 'urn:review-board:problem:';

/**
 * The one error hierarchy of the service. `expose` follows middy's rule (status < 500): only those
 * errors reach the caller with their message; anything else becomes a generic 500.
 */
export class ServiceError extends Error {
  readonly expose: boolean;
  /** Seconds after which a retry may succeed (a transport may say so: HTTP's `Retry-After`). */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    retryAfterSeconds?: number,
  ) {
    super(detail);
    this.name = new.target.name;
    this.expose = status < 500;
    if (retryAfterSeconds !== undefined) this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The RFC 9457 problem document, without the request id (added where the response is made). */
  toJSON(): Record<string, unknown> {
    return {
      type: `${PROBLEM_TYPE_PREFIX}${this.slug}`,
      title: this.title,
      status: this.status,
      detail: this.detail,
      ...this.extra,
    };
  }
}

export class BadRequestError extends ServiceError {
  constructor(detail: string, slug = 'bad-request') {
    super(400, slug, 'Bad Request', detail);
  }
}

export class ValidationError extends ServiceError {
  constructor(
    readonly errors: FieldProblem[],
    detail = errors.length === 1 && errors[0] ? `${errors[0].pointer || 'request'}: ${errors[0].detail}` : 'The request is not valid.',
  ) {
    super(400, 'validation-error', 'Validation Failed', detail, { errors });
  }
}

/**
 * A domain rule refused fields of the operation's input. The domain names the fields as the
 * operation's input has them (`content`, `attachments`); only this layer knows they arrive in the
 * JSON body and turns them into pointers (`/body/content`).
 */
export class InvalidInputError extends ValidationError {
  constructor(fields: { field: string; detail: string }[], detail?: string) {
    super(
      fields.map(({ field, detail: problem }) => ({ pointer: `/body/${field}`, detail: problem })),
      detail,
    );
  }
}

export class UnauthorizedError extends ServiceError {
  constructor(detail = 'A valid credential is required: send Authorization: Bearer <API key>.') {
    super(401, 'unauthorized', 'Unauthorized', detail);
  }
}

export class PaymentRequiredError extends ServiceError {
  constructor(detail: string, slug = 'plan-limit-reached') {
    super(402, slug, 'Plan Limit Reached', detail);
  }
}

export class ForbiddenError extends ServiceError {
  constructor(detail: string, slug = 'forbidden') {
    super(403, slug, 'Forbidden', detail);
  }
}

/** The organization's plan does not include a feature the operation needs. */
export class FeatureNotEnabledError extends ServiceError {
  constructor(feature: string, detail: string) {
    super(403, 'feature-not-enabled', 'Feature Not Enabled', detail, { feature });
  }
}

export class NotFoundError extends ServiceError {
  constructor(detail: string) {
    super(404, 'not-found', 'Not Found', detail);
  }
}

export class ConflictError extends ServiceError {
  constructor(detail: string, slug = 'conflict') {
    super(409, slug, 'Conflict', detail);
  }
}

/**
 * A request with an `Idempotency-Key` whose first request with that key is still running: the
 * caller retries after a moment and then gets that request's response replayed.
 */
export class IdempotentRequestInProgressError extends ServiceError {
  constructor(detail: string) {
    super(409, 'idempotent-request-in-progress', 'Request In Progress', detail, {}, 1);
  }
}

/** An `Idempotency-Key` sent again with another request (method, path, query or body) than the one it was first used with. */
export class IdempotencyKeyReusedError extends ServiceError {
  constructor(detail: string) {
    super(422, 'idempotency-key-reused', 'Idempotency Key Reused', detail);
  }
}

/** An `If-Match` naming a version the resource no longer has: nothing was changed (`shared/domain/common/versions.ts`). */
export class PreconditionFailedError extends ServiceError {
  constructor(detail: string) {
    super(412, 'precondition-failed', 'Precondition Failed', detail);
  }
}

export class PayloadTooLargeError extends ServiceError {
  constructor(detail: string) {
    super(413, 'payload-too-large', 'Payload Too Large', detail);
  }
}

/** Too many requests of one kind from one caller or for one subject: retry after `retryAfterSeconds` (the `Retry-After` header). */
export class TooManyRequestsError extends ServiceError {
  constructor(detail: string, retryAfterSeconds: number, slug = 'rate-limited') {
    super(429, slug, 'Too Many Requests', detail, { retryAfterSeconds }, retryAfterSeconds);
  }
}

export class UnprocessableError extends ServiceError {
  constructor(detail: string) {
    super(422, 'unprocessable', 'Unprocessable Entity', detail);
  }
}

/**
 * 501 is a deliberate answer the caller should read, so it is exposed although it is a 5xx (every
 * other status >= 500 is hidden behind a generic 500).
 */
export class NotImplementedError extends ServiceError {
  override readonly expose = true;

  constructor(detail: string) {
    super(501, 'not-implemented', 'Not Implemented', detail);
  }
}

/**
 * 503 for a feature this deployment was not configured for (the SDK exchange without an identity
 * provider) or a dependency that did not answer: exposed, since the caller can act on it.
 */
export class ServiceUnavailableError extends ServiceError {
  override readonly expose = true;

  constructor(detail: string, slug = 'service-unavailable') {
    super(503, slug, 'Service Unavailable', detail);
  }
}

export class InternalError extends ServiceError {
  constructor() {
    super(500, 'internal', 'Internal Server Error', 'The service failed to handle the request. Quote the requestId when reporting it.');
  }
}

/** The text of whatever was thrown: libraries (WASM modules among them) throw strings as well as Errors. */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
