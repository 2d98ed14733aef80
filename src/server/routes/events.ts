/**
 * The SSE routes: one run's events and the state changes of every run the caller may see, both
 * resumable with `Last-Event-ID` or `?after=` (a run's seq; a feed position). A stream's slot is
 * taken before it opens, so over the tenant's cap the answer is a 429 JSON error, not a stream.
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../app-env.js';
import { parseInput } from '../read-body.js';
import { requireRole, visibleRun, type ServerDeps } from '../server-deps.js';
import { openSse, prepareFeedStream, prepareRunStream } from '../sse/index.js';

const afterSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'must be an event id (a non-negative integer)')
  .transform(Number);

/** The cursor a client resumes after: a reconnecting EventSource's Last-Event-ID wins over the URL's `after`. */
function cursorOf(c: Context<AppEnv>): number | undefined {
  const cursor = c.req.header('last-event-id') ?? c.req.query('after');
  return cursor === undefined || cursor === '' ? undefined : parseInput(afterSchema, cursor, 'Last-Event-ID / after');
}

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
    const after = cursorOf(c) ?? 0;
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
    // Without a cursor the stream starts at the feed's head: what happens from now on.
    const after = cursorOf(c);
    const release = slots.acquire(principal.tenant);
    try {
      const pump = prepareFeedStream({ runtime, pollMs: limits.feedPollMs }, principal, after);
      return openSse(c, sseOptions(release), pump);
    } catch (error) {
      release();
      throw error;
    }
  });

  return app;
}
