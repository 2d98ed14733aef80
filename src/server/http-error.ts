/**
 * The server's one exception, and how a failure becomes an HTTP status. Runtime failures map by
 * kind (user → 400/404/409, policy → 403, the rest → 500); the few failures only HTTP has
 * (authentication, size, rate) carry their own status.
 */
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { createFailure, toFailure, type Failure, type FailureCode } from '../failure.js';

/** Failures that exist only at the HTTP boundary (codes of `FAILURE_CODES`), with their status. */
export const HTTP_FAILURES = {
  'auth.required': 401,
  'auth.forbidden': 403,
  'route.not_found': 404,
  'request.too_large': 413,
  'rate.limited': 429,
  'stream.limit': 429,
  'stream.lagging': 500,
  'server.closing': 503,
} as const satisfies Partial<Record<FailureCode, ContentfulStatusCode>>;
export type HttpFailureCode = keyof typeof HTTP_FAILURES;

/** A failure as the API sends it: one of the closed set of `FAILURE_CODES`. */
export type ApiFailure = Failure;

const CONFLICTS: ReadonlySet<string> = new Set([
  'session.busy',
  'schedule.conflict',
  'schedule.invalid_transition',
  'idempotency.mismatch',
  'approval.already_decided',
  'approval.refused',
  'approval.expired',
  'approval.edit_not_allowed',
  'approval.wrong_decision',
  'run.machine_mismatch',
  'run.agent_mismatch',
  'fork.tool_missing',
  'run.invalid_transition',
  'run.cancelled',
]);

/** The HTTP status of a failure. */
export function toStatus(failure: ApiFailure): ContentfulStatusCode {
  if (failure.code in HTTP_FAILURES) return HTTP_FAILURES[failure.code as HttpFailureCode];
  // Too many runs of the tenant in flight: the same request may pass once one ends.
  if (failure.code === 'run.tenant_limit') return 429;
  switch (failure.kind) {
    case 'user':
      if (failure.code.endsWith('.not_found')) return 404;
      return CONFLICTS.has(failure.code) ? 409 : 400;
    case 'policy':
      return 403;
    case 'model':
    case 'tool':
      return 500;
    case 'system':
      // The database refused the write (a full disk): nothing changed, and the same request may succeed later.
      return failure.code === 'store.write_failed' ? 503 : 500;
  }
}

/** The server's one exception: a failure with its status and, for 401 and 429, a header. */
export class HttpError extends HTTPException {
  readonly failure: ApiFailure;
  readonly headers: Record<string, string>;
  constructor(failure: ApiFailure, headers: Record<string, string> = {}) {
    super(toStatus(failure), { message: failure.message });
    this.failure = failure;
    this.headers = headers;
  }
}

/** An `HttpError` for one of the HTTP-only failures. */
export function httpError(
  code: HttpFailureCode,
  message: string,
  extra: { details?: Record<string, unknown>; headers?: Record<string, string> } = {},
): HttpError {
  const failure = createFailure(code, message, extra.details ? { details: extra.details } : {});
  return new HttpError(failure, extra.headers);
}

/** Whatever was thrown, as the failure and status the API answers with; unknown errors hide their message. */
export function toApiError(error: unknown): {
  failure: ApiFailure;
  status: ContentfulStatusCode;
  headers: Record<string, string>;
} {
  if (error instanceof HttpError)
    return { failure: error.failure, status: error.status as ContentfulStatusCode, headers: error.headers };
  if (error instanceof HTTPException) {
    // Raised inside Hono itself (e.g. a body it could not read).
    const failure: ApiFailure =
      error.status === 413
        ? { code: 'request.too_large', kind: 'user', message: 'The request body is too large' }
        : { code: 'input.invalid', kind: 'user', message: error.message || 'Invalid request' };
    return { failure, status: toStatus(failure), headers: {} };
  }
  const failure = toFailure(error);
  if (failure.code === 'internal.error') {
    return { failure: { ...failure, message: 'Internal server error' }, status: 500, headers: {} };
  }
  return { failure, status: toStatus(failure), headers: {} };
}
