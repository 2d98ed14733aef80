/**
 * `POST /v1/reruns`: forks every finished run of the caller's tenant that the filter matches at
 * the step it ended in (`runtime.rerun`); the same request again creates nothing.
 */
import { Hono } from 'hono';
import type { AppEnv } from '../app-env.js';
import { readBody } from '../read-body.js';
import { requireRole, type ServerDeps } from '../server-deps.js';
import { toRerunReportJson } from '../to-json.js';
import { rerunBodySchema, toRerunFilter } from './fork-body.js';

/** The rerun route, under `/v1`. */
export function rerunRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime } = deps;
  const app = new Hono<AppEnv>();
  app.post('/reruns', async (c) => {
    const principal = requireRole(c, 'submit');
    const body = await readBody(c, rerunBodySchema);
    // Dev mode reruns every tenant's runs; a token only its own.
    const report = await runtime.rerun(
      toRerunFilter(body, principal.name, principal.allTenants ? undefined : principal.tenant),
    );
    return c.json(toRerunReportJson(report));
  });
  return app;
}
