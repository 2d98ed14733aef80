/**
 * The HTTP service: a JSON API and SSE event streams over the public runtime API, on Hono.
 * Invariants: every `/v1` request is authenticated (token, SSE ticket, or dev mode on loopback
 * only) and rate-limited per token; a caller sees only its tenant's runs (another tenant's run
 * answers 404, everywhere); every error body is `{ "error": failure }` with its status from the
 * failure's kind; a new run's `tenant_id` is the caller's, never the body's; a run's stream
 * delivers each committed event once, in order, with `id:` = seq.
 */
export { createServer, type ServerOptions, type Listening, type BatonServer } from './create-server.js';
export { SERVER_DEFAULTS, type ServerLimits } from './defaults.js';
export { HTTP_FAILURES, HttpError, toStatus, type ApiFailure, type HttpFailureCode } from './http-error.js';
export {
  loadAuthConfig,
  parseAuthConfig,
  isLoopback,
  ROLES,
  type AuthConfig,
  type Role,
  type TokenEntry,
} from './auth/index.js';
export type { AppEnv } from './app-env.js';
export {
  toRunJson,
  toApprovalJson,
  toEventJson,
  toRerunReportJson,
  toScheduleJson,
  toSnakeJson,
  toToolCallJson,
} from './to-json.js';
export { inspectorRoutes, INSPECTOR_HEADERS, findInspectorDir } from './inspector/index.js';
