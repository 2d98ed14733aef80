/** What the routes share: the runtime, the stream slots, the tickets, the limits. */
import type { Context } from 'hono';
import type { Run, Runtime } from '../index.js';
import type { AuthConfig } from './auth/auth-config.js';
import { canSee, hasRole, type Principal } from './auth/principal.js';
import type { Role } from './auth/auth-config.js';
import type { RateLimiter } from './auth/rate-limit.js';
import type { Tickets } from './auth/tickets.js';
import type { AppEnv } from './app-env.js';
import type { ServerLimits } from './defaults.js';
import { httpError } from './http-error.js';
import { BatonError, createFailure, quoteId } from '../failure.js';
import type { StreamSlots } from './sse/stream-slots.js';

/** Everything a route needs, built once per server. */
export interface ServerDeps {
  runtime: Runtime;
  auth: AuthConfig;
  limits: ServerLimits;
  slots: StreamSlots;
  tickets: Tickets;
  limiter: RateLimiter;
  /** Aborted when the server closes: long requests (`?wait=true`) answer then. */
  closing: AbortSignal;
  /** Where unexpected errors are reported (their message is not sent to the client). */
  onError: (error: unknown) => void;
}

/** The caller, after checking it has `role`; 403 otherwise. */
export function requireRole(c: Context<AppEnv>, role: Role): Principal {
  const principal = c.get('principal');
  if (!hasRole(principal, role)) {
    throw httpError('auth.forbidden', `'${principal.name}' lacks the role '${role}'`, {
      details: { required_role: role },
    });
  }
  return principal;
}

/** The run, when it exists and the caller's tenant may see it; 404 `run.not_found` in both other cases alike. */
export async function visibleRun(runtime: Runtime, principal: Principal, runId: string): Promise<Run> {
  const run = await runtime.get(runId);
  if (!canSee(principal, run.tenantId)) {
    throw new BatonError(createFailure('run.not_found', `Run ${quoteId(runId)} does not exist`));
  }
  return run;
}
