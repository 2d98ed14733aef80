/**
 * The schedule routes, under `/v1/schedules`: create (the same definition again is the same
 * schedule; another under its id is `409 schedule.conflict`), list, read, pause, resume, trigger
 * a run now, delete. Ids are the caller's tenant's, like session ids.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { ScheduleDefinition } from '../../index.js';
import type { AppEnv } from '../app-env.js';
import { parseInput, readBody } from '../read-body.js';
import type { Principal } from '../auth/principal.js';
import { requireRole, type ServerDeps } from '../server-deps.js';
import { toRunJson, toScheduleJson } from '../to-json.js';
import { contextBodySchema, optionsBodySchema, toRunContext, toRunOptions } from './start-run.js';

/** The query of `GET /v1/schedules`: a page of up to `limit` (1-1000, default 100) after an id. */
const listQuerySchema = z.strictObject({
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,3}$/, 'a whole number, 1-1000')
    .refine((value) => Number(value) <= 1_000, 'at most 1000')
    .optional(),
  after: z.string().min(1).optional(),
});

/** The body of `POST /v1/schedules` (snake_case; unknown fields are refused). */
const scheduleBodySchema = z.strictObject({
  id: z.string().min(1).max(128),
  cron: z.string().min(1).optional(),
  timezone: z.string().min(1).optional(),
  every: z.number().optional(),
  at: z.union([z.number(), z.string()]).optional(),
  input: z.string().min(1),
  session_id: z.string().min(1).max(128).optional(),
  context: contextBodySchema.optional(),
  options: optionsBodySchema.omit({ idempotency_key: true }).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
  overlap: z.string().optional(),
  catch_up: z.string().optional(),
});

/**
 * A schedule's context as `principal` gives it: the caller's tenant forced, as for a run, but not
 * who made it (`submitted_by`, a defaulted `user_id`), so the same definition sent by any caller of
 * the tenant is the same schedule.
 */
function scheduleContext(context: z.infer<typeof contextBodySchema>, principal: Principal) {
  const runContext = toRunContext(context, principal);
  delete runContext.submitted_by;
  if (context.user_id === undefined) delete runContext.user_id;
  return runContext;
}

/** The schedule routes, under `/v1/schedules`. */
export function scheduleRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime } = deps;
  const app = new Hono<AppEnv>();

  app.post('/', async (c) => {
    const principal = requireRole(c, 'submit');
    const body = await readBody(c, scheduleBodySchema);
    const asked = Date.now();
    const definition = {
      id: body.id,
      ...(body.cron !== undefined ? { cron: body.cron } : {}),
      ...(body.timezone !== undefined ? { timezone: body.timezone } : {}),
      ...(body.every !== undefined ? { every: body.every } : {}),
      ...(body.at !== undefined ? { at: body.at } : {}),
      input: body.input,
      ...(body.session_id !== undefined ? { sessionId: body.session_id } : {}),
      context: scheduleContext(body.context ?? {}, principal),
      ...(body.options ? { options: toRunOptions(body.options) } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
      ...(body.tags ? { tags: body.tags } : {}),
      ...(body.overlap !== undefined ? { overlap: body.overlap } : {}),
      ...(body.catch_up !== undefined ? { catchUp: body.catch_up } : {}),
    } as ScheduleDefinition;
    const schedule = await runtime.schedule(definition);
    // 201 for a schedule this request made; 200 for the same one made before.
    return c.json(toScheduleJson(schedule), schedule.createdAt >= asked ? 201 : 200);
  });

  app.get('/', async (c) => {
    const principal = requireRole(c, 'view');
    const query = parseInput(listQuerySchema, c.req.query(), 'query');
    const limit = query.limit === undefined ? 100 : Number(query.limit);
    const schedules = await runtime.listSchedules({
      ...(principal.allTenants ? {} : { tenant: principal.tenant }),
      ...(query.after ? { after: query.after } : {}),
      limit,
    });
    // The id to pass as `after` for the next page, when this one is full.
    const next = schedules.length === limit ? schedules.at(-1)!.id : null;
    return c.json({ schedules: schedules.map(toScheduleJson), next_after: next });
  });

  app.get('/:id', async (c) => {
    const principal = requireRole(c, 'view');
    return c.json(toScheduleJson(await runtime.getSchedule(c.req.param('id'), { tenant: principal.tenant })));
  });

  for (const action of ['pause', 'resume'] as const) {
    app.post(`/:id/${action}`, async (c) => {
      const principal = requireRole(c, 'submit');
      const scope = { tenant: principal.tenant };
      const id = c.req.param('id');
      const schedule =
        action === 'pause' ? await runtime.pauseSchedule(id, scope) : await runtime.resumeSchedule(id, scope);
      return c.json(toScheduleJson(schedule));
    });
  }

  // A run now, as a tick would start it (its metadata names the schedule).
  app.post('/:id/trigger', async (c) => {
    const principal = requireRole(c, 'submit');
    const run = await runtime.triggerSchedule(c.req.param('id'), { tenant: principal.tenant });
    return c.json(toRunJson(run), 201);
  });

  app.delete('/:id', async (c) => {
    const principal = requireRole(c, 'submit');
    await runtime.deleteSchedule(c.req.param('id'), { tenant: principal.tenant });
    return c.body(null, 204);
  });

  return app;
}
