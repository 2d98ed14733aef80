/** The Hono app: middleware in order (origin, authentication and rate, body size), the routes, and the error shape. */
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { AppEnv } from './app-env.js';
import { authenticate } from './auth/authenticate.js';
import { httpError, toApiError } from './http-error.js';
import { inspectorRoutes } from './inspector/index.js';
import { approvalRoutes, eventRoutes, metaRoutes, rerunRoutes, runRoutes, scheduleRoutes } from './routes/index.js';
import type { ServerDeps } from './server-deps.js';
import { clientGone } from './client-gone.js';

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

// A browser page of another origin cannot make a state-changing request, even in dev mode
// (where no token stands in its way).
const refuseCrossOrigin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header('origin');
  if (origin !== undefined && !SAFE_METHODS.has(c.req.method)) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host !== c.req.header('host'))
      throw httpError('auth.forbidden', `Cross-origin requests from '${origin}' are refused`);
  }
  await next();
};

/** Builds the app over the server's dependencies. */
export function createApp(deps: ServerDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // No response is to be sniffed into another type: artifacts are untrusted bytes served from the
  // inspector's origin, and JSON must never render as a page.
  app.use('*', async (c, next) => {
    await next();
    c.header('X-Content-Type-Options', 'nosniff');
  });
  // Unauthenticated: how many runs are stalled, never which (they belong to tenants). A runtime
  // whose commits fail (a full disk) answers 503, so a load balancer stops sending it work.
  app.get('/healthz', (c) => {
    if (deps.closing.aborted) return c.json({ status: 'closing' });
    const health = deps.runtime.health();
    return c.json(
      {
        status: health.status,
        stalled_runs: health.stalledRuns.length,
        writes: health.writeFailure ? 'refused' : 'ok',
      },
      health.status === 'ok' ? 200 : 503,
    );
  });
  app.route('/', inspectorRoutes());
  app.use('/v1/*', refuseCrossOrigin);
  app.use('/v1/*', authenticate(deps.auth, deps.tickets, deps.limiter));
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: deps.limits.bodyBytes,
      onError: () => {
        throw httpError('request.too_large', `The request body is larger than ${deps.limits.bodyBytes} bytes`, {
          details: { limit_bytes: deps.limits.bodyBytes },
        });
      },
    }),
  );
  app.route('/v1/runs', runRoutes(deps));
  app.route('/v1/runs', approvalRoutes(deps));
  app.route('/v1', eventRoutes(deps));
  app.route('/v1', metaRoutes(deps));
  app.route('/v1', rerunRoutes(deps));
  app.route('/v1/schedules', scheduleRoutes(deps));
  app.notFound((c) => {
    const failure = toApiError(httpError('route.not_found', `No route ${c.req.method} ${c.req.path}`)).failure;
    return c.json({ error: failure }, 404);
  });
  app.onError((error, c) => {
    const { failure, status, headers } = toApiError(clientGone(error, c.req.raw) ?? error);
    if (failure.code === 'internal.error') deps.onError(error);
    return c.json({ error: failure }, status, headers);
  });
  return app;
}
