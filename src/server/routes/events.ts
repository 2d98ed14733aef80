/**
 * The SSE routes: one run's events (resumable with `Last-Event-ID` or `?after=`) and the state
 * changes of every run the caller may see. A stream's slot is taken before it opens, so over the
 * tenant's cap the answer is a 429 JSON error, not a stream.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../app-env.js';
import { parseInput } from '../read-body.js';
import { requireRole, visibleRun, type ServerDeps } from '../server-deps.js';
import { openSse, prepareRunStream, prepareTenantStream } from '../sse/index.js';

const afterSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'must be an event seq (a non-negative integer)')
  .transform(Number);

/** The event streams: `/v1/runs/{id}/events` and `/v1/events`. */
export function eventRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime, slots, limits } = deps;
  const app = new Hono<AppEnv>();
  const sseOptions = (release: () => void) => ({
    slots,
    release,
    heartbeatMs: limits.heartbeatMs,
    onError: deps.onError,
  });

  app.get('/runs/:id/events', async (c) => {
    const principal = requireRole(c, 'view');
    const run = await visibleRun(runtime, principal, c.req.param('id'));
    // A reconnecting EventSource sends Last-Event-ID; it wins over the `after` of the original URL.
    const cursor = c.req.header('last-event-id') ?? c.req.query('after');
    const after = cursor === undefined || cursor === '' ? 0 : parseInput(afterSchema, cursor, 'Last-Event-ID / after');
    const release = slots.acquire(principal.tenant);
    try {
      const prepared = await prepareRunStream({ runtime }, run, after);
      // 204 tells an EventSource not to reconnect: the run has ended and nothing is left.
      if (prepared.kind === 'none') {
        release();
        return c.body(null, 204);
      }
      return openSse(c, sseOptions(release), prepared.pump);
    } catch (error) {
      release();
      throw error;
    }
  });

  app.get('/events', (c) => {
    const principal = requireRole(c, 'view');
    // The stream of every run has no sequence to resume from, but a malformed cursor is still
    // the client's mistake, answered as on a run's stream.
    const cursor = c.req.header('last-event-id') ?? c.req.query('after');
    if (cursor !== undefined && cursor !== '') parseInput(afterSchema, cursor, 'Last-Event-ID / after');
    const release = slots.acquire(principal.tenant);
    try {
      const pump = prepareTenantStream({ runtime, tenantOf: deps.tenantOf, queueLimit: limits.sseQueue }, principal);
      return openSse(c, sseOptions(release), pump);
    } catch (error) {
      release();
      throw error;
    }
  });

  return app;
}
