/**
 * The run routes: start, list, read (run, steps, tool calls, trace, approvals, artifacts, the
 * whole run as one export), cancel, and an operator's pause and resume.
 * Every read goes through `visibleRun`, so another tenant's run answers 404 like a missing one.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../app-env.js';
import { parseInput, readBody } from '../read-body.js';
import { requireRole, visibleRun, type ServerDeps } from '../server-deps.js';
import { buildRunExport } from '../run-export.js';
import { toApprovalJson, toRunJson, toSnakeJson, toToolCallJson } from '../to-json.js';
import { startBodySchema, toStartRequest } from './start-run.js';
import { forkBodySchema, toForkRequest } from './fork-body.js';
import { waitSettled } from './wait-settled.js';
import { listFilterOf } from './list-query.js';

const startQuerySchema = z.object({ wait: z.enum(['true', 'false', '1', '0']).optional() });

const cancelBodySchema = z
  .strictObject({
    reason: z.string().max(2000).optional(),
    /** Undo the run's completed calls that have a compensator (newest first) before it ends. */
    compensate: z.boolean().optional(),
  })
  .optional();

/** The body of a pause or a resume: why (the operator is the caller). */
const pauseBodySchema = z.strictObject({ reason: z.string().max(2000).optional() }).optional();

/** The run routes, under `/v1/runs`. */
export function runRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime } = deps;
  const app = new Hono<AppEnv>();

  app.post('/', async (c) => {
    const principal = requireRole(c, 'submit');
    const query = parseInput(startQuerySchema, c.req.query(), 'query');
    const body = await readBody(c, startBodySchema);
    // A caller's W3C trace context: the run's trace links to it.
    const traceparent = c.req.header('traceparent');
    const run = await runtime.start({ ...toStartRequest(body, principal), ...(traceparent ? { traceparent } : {}) });
    const wait = query.wait === 'true' || query.wait === '1';
    const answer = wait
      ? await waitSettled(runtime, run.id, deps.limits.waitTimeoutMs, [deps.closing, c.req.raw.signal])
      : run;
    return c.json(toRunJson(answer), 201);
  });

  app.get('/', async (c) => {
    const principal = requireRole(c, 'view');
    const page = await runtime.list(listFilterOf(c.req.queries(), principal));
    return c.json({ runs: page.runs.map(toRunJson), next_cursor: page.nextCursor });
  });

  app.get('/:id', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    return c.json(toRunJson(run));
  });

  app.get('/:id/steps', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    return c.json({ steps: (await runtime.steps(run.id)).map(toSnakeJson) });
  });

  app.get('/:id/tool-calls', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    return c.json({ tool_calls: (await runtime.toolCalls(run.id)).map(toToolCallJson) });
  });

  app.get('/:id/trace', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    const trace = await runtime.trace(run.id);
    return c.json({
      run: toRunJson(trace.run),
      steps: trace.steps.map(toSnakeJson),
      spans: trace.spans.map(toSnakeJson),
    });
  });

  app.get('/:id/approvals', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    return c.json({ approvals: (await runtime.approvals(run.id)).map(toApprovalJson) });
  });

  app.get('/:id/artifacts', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    const id = encodeURIComponent(run.id);
    const refs = await runtime.artifacts(run.id);
    return c.json({
      artifacts: refs.map((ref) => ({
        ...(toSnakeJson(ref) as object),
        url: `/v1/runs/${id}/artifacts/${ref.sha256}`,
      })),
    });
  });

  app.get('/:id/artifacts/:sha256', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    const artifact = await runtime.artifact(run.id, c.req.param('sha256'));
    return c.body(new Uint8Array(artifact.content), 200, {
      'content-type': artifact.mediaType,
      'content-length': String(artifact.content.length),
      // Content-addressed: the same URL always answers the same bytes.
      etag: `"${artifact.sha256}"`,
      'cache-control': 'private, max-age=31536000, immutable',
    });
  });

  app.get('/:id/export', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'view'), c.req.param('id'));
    return c.json(await buildRunExport(runtime, run.id));
  });

  app.post('/:id/fork', async (c) => {
    const principal = requireRole(c, 'submit');
    const source = await visibleRun(runtime, principal, c.req.param('id'));
    const body = await readBody(c, forkBodySchema);
    const fork = await runtime.fork(source.id, toForkRequest(body, principal.name, principal));
    return c.json(toRunJson(fork), 201);
  });

  app.post('/:id/cancel', async (c) => {
    const run = await visibleRun(runtime, requireRole(c, 'submit'), c.req.param('id'));
    const body = await readBody(c, cancelBodySchema);
    const cancelled = await runtime.cancel(run.id, {
      ...(body?.reason ? { reason: body.reason } : {}),
      ...(body?.compensate ? { compensate: true } : {}),
    });
    return c.json(toRunJson(cancelled));
  });

  // An operator stops a run before its next step (`wait_reason: 'paused'` once reached), and lets it go on.
  app.post('/:id/pause', async (c) => {
    const principal = requireRole(c, 'submit');
    const run = await visibleRun(runtime, principal, c.req.param('id'));
    const body = await readBody(c, pauseBodySchema);
    const paused = await runtime.pause(run.id, {
      by: principal.name,
      ...(body?.reason ? { reason: body.reason } : {}),
    });
    return c.json(toRunJson(paused));
  });

  app.post('/:id/resume', async (c) => {
    const principal = requireRole(c, 'submit');
    const run = await visibleRun(runtime, principal, c.req.param('id'));
    const body = await readBody(c, pauseBodySchema);
    const resumed = await runtime.resume(run.id, {
      by: principal.name,
      ...(body?.reason ? { reason: body.reason } : {}),
    });
    return c.json(toRunJson(resumed));
  });

  return app;
}
