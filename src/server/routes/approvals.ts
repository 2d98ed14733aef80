/**
 * Deciding approvals: only the `approve` role (or `admin`) may, the decider recorded is the
 * token's name, and a second decision answers 409 `approval.already_decided` (the runtime
 * guarantees nothing runs twice).
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../app-env.js';
import { readBody } from '../read-body.js';
import { requireRole, visibleRun, type ServerDeps } from '../server-deps.js';
import { toApprovalJson } from '../to-json.js';

const decisionSchema = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    reason: z.string().max(2000).optional(),
    /** With `reject`: end the run `failed` (`rejected`) instead of telling the model. */
    terminate: z.boolean().optional(),
    /** With `reject` and `terminate`: undo the run's completed calls (newest first) before it ends. */
    compensate: z.boolean().optional(),
    /** With `approve` of an uncertain side effect: run it again, or record it as done. */
    resolution: z.enum(['retry', 'done']).optional(),
  })
  .refine((body) => body.decision === 'reject' || body.terminate === undefined, {
    message: "'terminate' goes with 'reject' only",
    path: ['terminate'],
  })
  .refine((body) => body.compensate === undefined || body.terminate === true, {
    message: "'compensate' goes with 'reject' and 'terminate: true' only",
    path: ['compensate'],
  })
  .refine((body) => body.decision === 'approve' || body.resolution === undefined, {
    message: "'resolution' goes with 'approve' only",
    path: ['resolution'],
  });

/** `POST /v1/runs/{id}/approvals/{approval_id}`. */
export function approvalRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime } = deps;
  const app = new Hono<AppEnv>();
  app.post('/:id/approvals/:approvalId', async (c) => {
    // The role is checked before the run, so a caller without it learns nothing about runs.
    const principal = requireRole(c, 'approve');
    const run = await visibleRun(runtime, principal, c.req.param('id'));
    const body = await readBody(c, decisionSchema);
    const approvalId = c.req.param('approvalId');
    const reason = body.reason === undefined ? {} : { reason: body.reason };
    const approval =
      body.decision === 'approve'
        ? await runtime.approve(run.id, approvalId, {
            by: principal.name,
            ...reason,
            ...(body.resolution ? { resolution: body.resolution } : {}),
          })
        : await runtime.reject(run.id, approvalId, {
            by: principal.name,
            ...reason,
            ...(body.terminate === undefined ? {} : { terminate: body.terminate }),
            ...(body.compensate ? { compensate: true } : {}),
          });
    return c.json(toApprovalJson(approval));
  });
  return app;
}
