/** Tickets for EventSource, the machine's definition, the tools, and the health check. */
import { Hono } from 'hono';
import { describeMachine } from '../../index.js';
import type { AppEnv } from '../app-env.js';
import { toSnakeJson } from '../to-json.js';
import type { ServerDeps } from '../server-deps.js';

/** `POST /v1/tickets`, `GET /v1/machine` and `GET /v1/tools` (any authenticated caller). */
export function metaRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post('/tickets', (c) => {
    const { ticket, expiresAt } = deps.tickets.issue(c.get('principal'));
    return c.json({ ticket, expires_at: expiresAt }, 201);
  });
  // The runtime's machine (a variant's, if it was given one); it never changes while the process lives.
  const { machine: definition, name, version } = deps.runtime.machine;
  const machine = describeMachine(definition, version, name);
  app.get('/machine', (c) => c.json(machine));
  // What runs can call, and what each runs as (effect, risk, trust, an MCP tool's origin).
  app.get('/tools', (c) => c.json({ tools: deps.runtime.tools().map(toSnakeJson) }));
  return app;
}
