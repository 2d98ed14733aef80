/**
 * SSE tickets: browsers' EventSource cannot send headers, so a caller trades its token for a
 * short-lived HMAC-signed ticket carrying its tenant, roles and expiry, sent as `?ticket=`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ROLES, type Role } from './auth-config.js';
import type { Principal } from './principal.js';

interface TicketBody {
  /** principal id, name, tenant, roles, scope, allTenants, expiry (epoch ms) */
  i: string;
  n: string;
  t: string;
  r: Role[];
  s?: string[];
  a: boolean;
  e: number;
}

/** Issues and checks tickets with one secret. */
export function createTickets(options: { secret?: string | undefined; ttlMs: number }) {
  const secret = options.secret ?? randomBytes(32).toString('hex');
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest('base64url');
  return {
    /** A ticket for `principal`, valid for the configured lifetime. */
    issue(principal: Principal, now = Date.now()): { ticket: string; expiresAt: number } {
      const body: TicketBody = {
        i: principal.id,
        n: principal.name,
        t: principal.tenant,
        r: [...principal.roles],
        ...(principal.scope ? { s: [...principal.scope] } : {}),
        a: principal.allTenants,
        e: now + options.ttlMs,
      };
      const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
      return { ticket: `${payload}.${sign(payload)}`, expiresAt: body.e };
    },
    /** The caller a ticket stands for, or undefined when it is forged, malformed or expired. */
    verify(ticket: string, now = Date.now()): Principal | undefined {
      const [payload, signature, extra] = ticket.split('.');
      if (!payload || !signature || extra !== undefined) return undefined;
      const expected = Buffer.from(sign(payload));
      const given = Buffer.from(signature);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
      let body: TicketBody;
      try {
        body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TicketBody;
      } catch {
        return undefined;
      }
      if (typeof body.e !== 'number' || body.e <= now) return undefined;
      return {
        id: body.i,
        name: body.n,
        tenant: body.t,
        roles: body.r.filter((role) => ROLES.includes(role)),
        scope: body.s,
        allTenants: body.a,
      };
    },
  };
}

export type Tickets = ReturnType<typeof createTickets>;
