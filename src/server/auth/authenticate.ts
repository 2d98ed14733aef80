/**
 * The authentication middleware: a bearer token (or, on SSE routes and `POST /v1/tickets`, a
 * ticket) becomes the request's principal, then the caller's token bucket is charged. Without
 * tokens (dev mode) every caller is the dev principal, but only on a loopback `Host`, which keeps
 * DNS rebinding out. A ticket stands for its token as the server is configured now: a ticket of
 * a token no longer configured is refused, and it has that token's roles and scope.
 */
import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { httpError } from '../http-error.js';
import type { AppEnv } from '../app-env.js';
import type { AuthConfig } from './auth-config.js';
import { hostOf, isLoopback } from './loopback.js';
import { DEV_PRINCIPAL, toPrincipal, type Principal } from './principal.js';
import type { RateLimiter } from './rate-limit.js';
import type { TicketCheck, Tickets } from './tickets.js';

const STREAM_PATHS = [/^\/v1\/events$/, /^\/v1\/runs\/[^/]+\/events$/];

/** True for the SSE routes, which accept `?ticket=` (as does `POST /v1/tickets`, to renew one). */
export function isStreamPath(path: string): boolean {
  return STREAM_PATHS.some((pattern) => pattern.test(path));
}

/** How a request may use a ticket: open a stream, reopen one (`Last-Event-ID`), renew it, or not at all. */
function ticketUse(method: string, path: string, lastEventId: string | undefined): 'open' | 'renew' | null {
  if (method === 'POST' && path === '/v1/tickets') return 'renew';
  if (method !== 'GET' || !isStreamPath(path)) return null;
  return lastEventId === undefined || lastEventId === '' ? 'open' : 'renew';
}

function refusal(check: Exclude<TicketCheck, { ok: true }>): string {
  switch (check.reason) {
    case 'invalid':
      return 'The ticket is not valid';
    case 'expired':
      return `The ticket has expired for new streams (at ${new Date(check.expiresAt ?? 0).toISOString()}); renew it with POST /v1/tickets?ticket=…`;
    case 'too_old':
      return `The ticket has expired (renewable until ${new Date(check.renewableUntil ?? 0).toISOString()}); trade a token for a new one at POST /v1/tickets`;
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates the middleware that sets `c.var.principal` or answers 401/403/429. */
export function authenticate(config: AuthConfig, tickets: Tickets, limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  const devMode = config.tokens.length === 0;
  // Looked up by digest, so no comparison runs over the secret itself.
  const principals = config.tokens.map((entry, i) => toPrincipal(entry, i));
  const byDigest = new Map(config.tokens.map((entry, i) => [digest(entry.token), principals[i]!]));
  const byId = new Map(principals.map((principal) => [principal.id, principal]));

  async function identify(c: Context<AppEnv>): Promise<Principal> {
    const header = c.req.header('authorization');
    const ticket = c.req.query('ticket');
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const principal = match?.[1] ? byDigest.get(digest(match[1])) : undefined;
      if (!principal) throw unauthorized('The bearer token is not valid');
      return principal;
    }
    if (ticket !== undefined) {
      const use = ticketUse(c.req.method, c.req.path, c.req.header('last-event-id'));
      if (!use) throw unauthorized('A ticket is accepted on event streams (and by POST /v1/tickets) only');
      const check = await tickets.check(ticket, { renewal: use === 'renew' });
      if (!check.ok) throw unauthorized(refusal(check), { reason: check.reason });
      // The token it was traded for must still be configured, as the same caller.
      const current = byId.get(check.principal.id);
      if (!current || current.name !== check.principal.name || current.tenant !== check.principal.tenant) {
        throw unauthorized('The ticket was issued for a token that is no longer configured', { reason: 'revoked' });
      }
      c.set('ticketOrigin', check.origin);
      return current;
    }
    throw unauthorized('Send a bearer token in the Authorization header');
  }

  return async (c, next) => {
    let principal: Principal;
    if (devMode) {
      const host = hostOf(c.req.header('host') ?? 'localhost');
      if (!isLoopback(host)) {
        throw httpError('auth.forbidden', `Without tokens the server answers loopback hosts only, not '${host}'`);
      }
      principal = DEV_PRINCIPAL;
    } else {
      principal = await identify(c);
    }
    const waitMs = limiter.take(principal.id);
    if (waitMs > 0) {
      const seconds = Math.ceil(waitMs / 1000);
      throw httpError('rate.limited', `Too many requests from '${principal.name}'; retry in ${seconds} s`, {
        details: { retry_after_ms: waitMs },
        headers: { 'Retry-After': String(seconds) },
      });
    }
    c.set('principal', principal);
    await next();
  };
}

function unauthorized(message: string, details?: { reason: string }) {
  return httpError('auth.required', message, {
    headers: { 'WWW-Authenticate': 'Bearer' },
    ...(details ? { details } : {}),
  });
}
