/**
 * Deciding a run's waits: an approval (approve, reject, edit, respond), a question (answer), a
 * budget (extend, end). Every decision needs the `approve` role (or `admin`); a wait a policy or
 * an expiry handed to another role needs that role too (or `admin`). The decider recorded is
 * the token's name, and a second decision answers 409 `approval.already_decided` (the runtime
 * guarantees nothing runs twice).
 */
import { Hono, type Context } from 'hono';
import type { Approval, Run, Runtime } from '../../index.js';
import type { AppEnv } from '../app-env.js';
import { hasRole, type Principal } from '../auth/principal.js';
import { httpError } from '../http-error.js';
import { readBody } from '../read-body.js';
import { requireRole, visibleRun, type ServerDeps } from '../server-deps.js';
import { toApprovalJson } from '../to-json.js';
import { answerBodySchema, decideBody, decisionBodySchema } from './decision-body.js';

/**
 * Checks that the caller may decide the wait `waitId` of `run`: a wait whose role is not
 * `approve` (a policy's escalation, an expiry's) needs that role, or `admin`. A wait the run does
 * not have is left to the runtime, which answers 404 for it.
 */
async function requireWaitRole(runtime: Runtime, principal: Principal, run: Run, waitId: string): Promise<void> {
  const wait: Approval | undefined = (await runtime.approvals(run.id)).find((a) => a.id === waitId);
  if (!wait || wait.role === 'approve') return;
  if (hasRole(principal, wait.role)) return;
  throw httpError('auth.forbidden', `'${principal.name}' lacks the role '${wait.role}' that wait '${waitId}' needs`, {
    details: { required_role: wait.role },
  });
}

/** The caller and the run a decision is about, once both checks have passed. */
async function decider(c: Context<AppEnv>, runtime: Runtime): Promise<{ principal: Principal; run: Run }> {
  // The role is checked before the run, so a caller without it learns nothing about runs.
  const principal = requireRole(c, 'approve');
  const run = await visibleRun(runtime, principal, c.req.param('id')!);
  return { principal, run };
}

/** `POST /v1/runs/{id}/approvals/{approval_id}` and `POST /v1/runs/{id}/inputs/{input_id}`. */
export function approvalRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime } = deps;
  const app = new Hono<AppEnv>();

  app.post('/:id/approvals/:approvalId', async (c) => {
    const { principal, run } = await decider(c, runtime);
    const body = await readBody(c, decisionBodySchema);
    const approvalId = c.req.param('approvalId');
    await requireWaitRole(runtime, principal, run, approvalId);
    const approval = await decideBody(runtime, run.id, approvalId, body, principal.name);
    return c.json(toApprovalJson(approval));
  });

  app.post('/:id/inputs/:inputId', async (c) => {
    const { principal, run } = await decider(c, runtime);
    const body = await readBody(c, answerBodySchema);
    const inputId = c.req.param('inputId');
    await requireWaitRole(runtime, principal, run, inputId);
    const approval = await runtime.answer(run.id, inputId, {
      answer: body.answer,
      by: principal.name,
      ...(body.reason === undefined ? {} : { reason: body.reason }),
    });
    return c.json(toApprovalJson(approval));
  });

  return app;
}
