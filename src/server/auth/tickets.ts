/**
 * SSE tickets: browsers' EventSource cannot send headers, so a caller trades its token for an
 * HMAC-signed ticket carrying its principal, sent as `?ticket=`. The key is the same for every
 * server process of a deployment: a configured secret, or one kept in the database (created by
 * the first process), so a ticket outlives a restart and works on any process behind one address.
 *
 * Two times: a ticket opens new streams until `expiresAt` (short: it travels in URLs); until
 * `renewableUntil` (counted from when the token was traded, and kept through renewals) it still
 * reopens event streams on a reconnect (a request with `Last-Event-ID`, as an EventSource sends;
 * a ticket is not bound to one stream: within its tenant and roles it reads any) and can be
 * traded for a fresh ticket, so a long-lived stream survives drops without the token.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { checkTicketSecret, isRoleName } from './auth-config.js';
import type { Principal } from './principal.js';

interface TicketBody {
  /** principal id, name, tenant, roles, scope, allTenants, expiry and origin (epoch ms) */
  i: string;
  n: string;
  t: string;
  r: string[];
  s?: string[];
  a: boolean;
  e: number;
  o: number;
}

/** A ticket as `POST /v1/tickets` answers it. */
export interface IssuedTicket {
  ticket: string;
  /** Until then it opens new streams. */
  expiresAt: number;
  /** Until then it reopens streams (with `Last-Event-ID`) and is renewed; the same across renewals. */
  renewableUntil: number;
}

/** What a ticket checks out as. */
export type TicketCheck =
  | { ok: true; principal: Principal; origin: number }
  | { ok: false; reason: 'invalid' | 'expired' | 'too_old'; expiresAt?: number; renewableUntil?: number };

/** Issues and checks tickets with the deployment's key. */
export interface Tickets {
  /** A ticket for `principal`; `origin` is when its token was traded (now, unless renewing). */
  issue(principal: Principal, options?: { origin?: number; now?: number }): Promise<IssuedTicket>;
  /**
   * Checks a ticket: a forged or malformed one is `invalid`; past `expiresAt` it is `expired`
   * unless `renewal` (a reconnect or a renewal), which it passes until `renewableUntil`.
   */
  check(ticket: string, options: { renewal: boolean; now?: number }): Promise<TicketCheck>;
}

/**
 * Creates the tickets of a server. `secret` is the configured key, or a function that finds the
 * shared one (read once, on the first ticket issued or checked).
 * @example
 * const tickets = createTickets({ secret: () => runtime.sharedSecret('sse-tickets'), ttlMs: 60_000, renewMs: 86_400_000 });
 */
export function createTickets(options: {
  secret: string | (() => Promise<string>);
  ttlMs: number;
  renewMs: number;
}): Tickets {
  const { secret } = options;
  if (typeof secret === 'string') checkTicketSecret(secret);
  let key: Promise<string> | undefined;
  const keyOf = () =>
    (key ??= (typeof secret === 'string' ? Promise.resolve(secret) : secret()).catch((error: unknown) => {
      // A database that could not be read now may be readable on the next request.
      key = undefined;
      throw error;
    }));
  const sign = async (payload: string) =>
    createHmac('sha256', await keyOf())
      .update(payload)
      .digest('base64url');

  return {
    async issue(principal, { origin, now = Date.now() } = {}) {
      const from = origin ?? now;
      const body: TicketBody = {
        i: principal.id,
        n: principal.name,
        t: principal.tenant,
        r: [...principal.roles],
        ...(principal.scope ? { s: [...principal.scope] } : {}),
        a: principal.allTenants,
        e: Math.min(now + options.ttlMs, from + options.renewMs),
        o: from,
      };
      const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
      return { ticket: `${payload}.${await sign(payload)}`, expiresAt: body.e, renewableUntil: from + options.renewMs };
    },

    async check(ticket, { renewal, now = Date.now() }) {
      const [payload, signature, extra] = ticket.split('.');
      if (!payload || !signature || extra !== undefined) return { ok: false, reason: 'invalid' };
      const expected = Buffer.from(await sign(payload));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given))
        return { ok: false, reason: 'invalid' };
      let body: TicketBody;
      try {
        body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TicketBody;
      } catch {
        return { ok: false, reason: 'invalid' };
      }
      if (typeof body.e !== 'number' || typeof body.o !== 'number') return { ok: false, reason: 'invalid' };
      const renewableUntil = body.o + options.renewMs;
      if (now >= renewableUntil) return { ok: false, reason: 'too_old', expiresAt: body.e, renewableUntil };
      if (now >= body.e && !renewal) return { ok: false, reason: 'expired', expiresAt: body.e, renewableUntil };
      return {
        ok: true,
        origin: body.o,
        principal: {
          id: body.i,
          name: body.n,
          tenant: body.t,
          roles: body.r.filter(isRoleName),
          scope: body.s,
          allTenants: body.a,
        },
      };
    },
  };
}
