/** Tickets for EventSource, the machine's definition, the tools, the memory, and the health check. */
import { Hono } from 'hono';
import { z } from 'zod';
import { parseInput } from '../read-body.js';
import { requireRole } from '../server-deps.js';
import { describeMachine } from '../../../machines/index.js';
import type { AppEnv } from '../app-env.js';
import { toSnakeJson } from '../to-json.js';
import type { ServerDeps } from '../server-deps.js';

const memoryQuerySchema = z
  .object({
    session_id: z.string().min(1).max(200).optional(),
    version: z.coerce.number().int().nonnegative().optional(),
  })
  .strict();

/** `POST /v1/tickets`, `GET /v1/machine`, `GET /v1/tools` and `GET /v1/memory` (any authenticated caller). */
export function metaRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // With a token: a new ticket. With a ticket (`?ticket=`, until it is too old): its renewal, for
  // the same caller and scope, and no longer-lived than the first ticket of its token trade.
  app.post('/tickets', async (c) => {
    const issued = await deps.tickets.issue(c.get('principal'), { origin: c.get('ticketOrigin') });
    return c.json({ ticket: issued.ticket, expires_at: issued.expiresAt, renewable_until: issued.renewableUntil }, 201);
  });
  // The runtime's machine (a variant's, if it was given one); it never changes while the process lives.
  const { machine: definition, name, version } = deps.runtime.machine;
  const machine = describeMachine(definition, version, name);
  app.get('/machine', (c) => c.json(machine));
  // What runs can call, and what each runs as (effect, risk, trust, an MCP tool's origin).
  app.get('/tools', (c) => c.json({ tools: deps.runtime.tools().map(toSnakeJson) }));
  // The caller's tenant's memory (and a session's of it) as of a version: what a run's step reads.
  app.get('/memory', async (c) => {
    const principal = requireRole(c, 'view');
    const given = Object.entries(c.req.query()).filter(([, value]) => value !== '');
    const query = parseInput(memoryQuerySchema, Object.fromEntries(given), 'query');
    const snapshot = await deps.runtime.memory({
      tenantId: principal.tenant,
      ...(query.session_id ? { sessionId: query.session_id } : {}),
      ...(query.version !== undefined ? { version: query.version } : {}),
    });
    // Entries are the agents' own data: as written.
    return c.json({ version: snapshot.version, session: snapshot.session, tenant: snapshot.tenant });
  });
  return app;
}
