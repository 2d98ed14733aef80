/**
 * The authentication middleware: a bearer token (or, on SSE routes only, a ticket) becomes the
 * request's principal, then the caller's token bucket is charged. Without tokens (dev mode) every
 * caller is the dev principal, but only on a loopback `Host`, which keeps DNS rebinding out.
 */
import { createHash } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { httpError } from '../http-error.js';
import type { AppEnv } from '../app-env.js';
import type { AuthConfig } from './auth-config.js';
import { hostOf, isLoopback } from './loopback.js';
import { DEV_PRINCIPAL, toPrincipal, type Principal } from './principal.js';
import type { RateLimiter } from './rate-limit.js';
import type { Tickets } from './tickets.js';

const STREAM_PATHS = [/^\/v1\/events$/, /^\/v1\/runs\/[^/]+\/events$/];

/** True for the SSE routes, the only ones that accept `?ticket=`. */
export function isStreamPath(path: string): boolean {
  return STREAM_PATHS.some((pattern) => pattern.test(path));
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Creates the middleware that sets `c.var.principal` or answers 401/403/429. */
export function authenticate(config: AuthConfig, tickets: Tickets, limiter: RateLimiter): MiddlewareHandler<AppEnv> {
  const devMode = config.tokens.length === 0;
  // Looked up by digest, so no comparison runs over the secret itself.
  const byDigest = new Map(config.tokens.map((entry, i) => [digest(entry.token), toPrincipal(entry, i)]));

  function identify(header: string | undefined, ticket: string | undefined, path: string): Principal {
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      const principal = match?.[1] ? byDigest.get(digest(match[1])) : undefined;
      if (!principal) throw unauthorized('The bearer token is not valid');
      return principal;
    }
    if (ticket !== undefined) {
      if (!isStreamPath(path)) throw unauthorized('A ticket is accepted on event streams only');
      const principal = tickets.verify(ticket);
      if (!principal) throw unauthorized('The ticket is not valid or has expired');
      return principal;
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
      principal = identify(c.req.header('authorization'), c.req.query('ticket'), c.req.path);
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

function unauthorized(message: string) {
  return httpError('auth.required', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
}
