/**
 * Deciding a run's human waits: only the `approve` role (or `admin`) may, or the role a policy
 * or an expiry escalated the wait to; the decider recorded is the token's name, and a second
 * decision answers 409 `approval.already_decided` (the runtime guarantees nothing runs twice).
 * Approvals take approve / reject / edit / respond, budget waits extend / end, and questions
 * their answer (`POST /v1/runs/{id}/inputs/{input_id}`).
 */
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { HumanDecision, Run } from '../../index.js';
import type { AppEnv } from '../app-env.js';
import { ROLES, type Role } from '../auth/auth-config.js';
import type { Principal } from '../auth/principal.js';
import { readBody } from '../read-body.js';
import { requireRole, visibleRun, type ServerDeps } from '../server-deps.js';
import { toApprovalJson } from '../to-json.js';

const reason = z.string().max(2000).optional();
const toolCallId = z.string().min(1).max(300).optional();
const limit = z.number().nonnegative().optional();

const approveReject = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    reason,
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

const decisionSchema = z.discriminatedUnion('decision', [
  approveReject,
  /** Approve with a person's arguments for one call (`tool_call_id` when the step has more than one). */
  z.strictObject({ decision: z.literal('edit'), args: z.unknown(), tool_call_id: toolCallId, reason }),
  /** Do not run the call: the person's output is its result. */
  z.strictObject({ decision: z.literal('respond'), output: z.unknown(), tool_call_id: toolCallId, reason }),
  /** Go on past a budget wait with these limits (absolute; `timeout_ms` is more time from now). */
  z.strictObject({
    decision: z.literal('extend'),
    limits: z.strictObject({
      max_steps: limit,
      max_llm_calls: limit,
      max_tool_calls: limit,
      max_tokens: limit,
      max_cost_usd: limit,
      timeout_ms: limit,
    }),
    reason,
  }),
  z.strictObject({ decision: z.literal('end'), reason }),
]);
type DecisionBody = z.infer<typeof decisionSchema>;

/** The answer (any JSON, checked by the runtime against the question's schema); `answer` is required. */
const answerSchema = z.strictObject({ answer: z.unknown(), reason });

function defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

const call = (id: string | undefined) => (id === undefined ? {} : { toolCallId: id });

/** The runtime's decision for a request body (snake_case on the wire, camelCase in process). */
function toDecision(body: DecisionBody, by: string): HumanDecision {
  const why = body.reason === undefined ? {} : { reason: body.reason };
  switch (body.decision) {
    case 'approve':
      return { decision: 'approve', by, ...why, ...(body.resolution ? { resolution: body.resolution } : {}) };
    case 'reject':
      return {
        decision: 'reject',
        by,
        ...why,
        ...(body.terminate === undefined ? {} : { terminate: body.terminate }),
        ...(body.compensate ? { compensate: true } : {}),
      };
    case 'edit':
      return { decision: 'edit', by, ...why, args: body.args, ...call(body.tool_call_id) };
    case 'respond':
      return { decision: 'respond', by, ...why, output: body.output, ...call(body.tool_call_id) };
    case 'extend': {
      const l = body.limits;
      const limits = defined({
        maxSteps: l.max_steps,
        maxLlmCalls: l.max_llm_calls,
        maxToolCalls: l.max_tool_calls,
        maxTokens: l.max_tokens,
        maxCostUsd: l.max_cost_usd,
        timeoutMs: l.timeout_ms,
      });
      return { decision: 'extend', by, ...why, limits };
    }
    case 'end':
      return { decision: 'end', by, ...why };
  }
}

/**
 * The caller may decide this wait: it has the `approve` role, and the role the wait names when a
 * policy or an expiry escalated it (a role tokens cannot carry is `admin`'s alone).
 */
async function requireWaitRole(c: Context<AppEnv>, deps: ServerDeps, principal: Principal, run: Run, id: string) {
  const wait = (await deps.runtime.approvals(run.id)).find((a) => a.id === id);
  if (!wait || wait.role === 'approve') return;
  const role: Role = (ROLES as readonly string[]).includes(wait.role) ? (wait.role as Role) : 'admin';
  if (principal.roles.includes(role) || principal.roles.includes('admin')) return;
  requireRole(c, role);
}

/** `POST /v1/runs/{id}/approvals/{approval_id}` and `POST /v1/runs/{id}/inputs/{input_id}`. */
export function approvalRoutes(deps: ServerDeps): Hono<AppEnv> {
  const { runtime } = deps;
  const app = new Hono<AppEnv>();
  app.post('/:id/approvals/:approvalId', async (c) => {
    // The role is checked before the run, so a caller without it learns nothing about runs.
    const principal = requireRole(c, 'approve');
    const run = await visibleRun(runtime, principal, c.req.param('id'));
    const body = await readBody(c, decisionSchema);
    const approvalId = c.req.param('approvalId');
    await requireWaitRole(c, deps, principal, run, approvalId);
    const approval = await runtime.decide(run.id, approvalId, toDecision(body, principal.name));
    return c.json(toApprovalJson(approval));
  });
  app.post('/:id/inputs/:inputId', async (c) => {
    const principal = requireRole(c, 'approve');
    const run = await visibleRun(runtime, principal, c.req.param('id'));
    const body = await readBody(c, answerSchema);
    const inputId = c.req.param('inputId');
    await requireWaitRole(c, deps, principal, run, inputId);
    const approval = await runtime.answer(run.id, inputId, {
      answer: body.answer,
      by: principal.name,
      ...(body.reason === undefined ? {} : { reason: body.reason }),
    });
    return c.json(toApprovalJson(approval));
  });
  return app;
}
