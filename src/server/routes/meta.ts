/** Tickets for EventSource, the machine's definition, and the health check. */
import { Hono } from 'hono';
import { describeMachine } from '../../index.js';
import type { AppEnv } from '../app-env.js';
import type { ServerDeps } from '../server-deps.js';

/** `POST /v1/tickets` and `GET /v1/machine` (any authenticated caller). */
export function metaRoutes(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post('/tickets', (c) => {
    const { ticket, expiresAt } = deps.tickets.issue(c.get('principal'));
    return c.json({ ticket, expires_at: expiresAt }, 201);
  });
  // The description never changes while the process lives: build it once.
  const machine = describeMachine();
  app.get('/machine', (c) => c.json(machine));
  return app;
}
