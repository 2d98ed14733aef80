/** `POST /v1/runs`: the request body, and how it becomes a `start()` request for the caller's tenant. */
import { z } from 'zod';
import type { RunOptions, RunUserContext, StartRequest } from '../../index.js';
import type { Principal } from '../auth/principal.js';
import { httpError } from '../http-error.js';

const count = z.number().int().nonnegative();

/** What happens to a wait no one decided in time: the model is told, the run ends, or another role decides. */
const onExpireSchema = z.union([
  z.enum(['reject', 'end']),
  z.strictObject({
    escalate: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'a role is 1-64 letters, digits, _ . -'),
  }),
]);

/** A run's context in a request body: anything, with these fields checked. */
export const contextBodySchema = z.looseObject({
  user_id: z.string().min(1).max(200).optional(),
  tenant_id: z.string().optional(),
  scope: z.array(z.string().min(1)).optional(),
});

/** A run's options in a request body (`POST /v1/runs`, `POST /v1/runs/{id}/fork`). */
export const optionsBodySchema = z.strictObject({
  idempotency_key: z.string().min(1).max(128).optional(),
  max_steps: z.number().int().positive().optional(),
  budget: z
    .strictObject({
      max_llm_calls: count.optional(),
      max_tool_calls: count.optional(),
      max_tokens: count.optional(),
      max_cost_usd: z.number().nonnegative().optional(),
      timeout_ms: z.number().int().positive().optional(),
    })
    .optional(),
  /** `ask`: a budget, the step limit or the deadline that runs out makes the run wait for a person. */
  on_budget_exceeded: z.enum(['fail', 'ask']).optional(),
  /** How long each human wait of the run lasts (ms), and what happens then. */
  expires_in: z.number().int().positive().optional(),
  on_expire: onExpireSchema.optional(),
});

/** A start's options: a run's, and what to do when its session already has an active run. */
const startOptionsBodySchema = optionsBodySchema.extend({
  /** `reject` (409 session.busy, the default), `enqueue` (wait its turn), `interrupt` (cancel the active run, go next). */
  on_busy: z.enum(['reject', 'enqueue', 'interrupt']).optional(),
  /** With `on_busy: interrupt`: how the active run is cancelled. */
  interrupt: z.strictObject({ compensate: z.boolean().optional(), reason: z.string().max(500).optional() }).optional(),
});

/** The body of `POST /v1/runs` (snake_case; unknown fields are refused so typos do not pass silently). */
export const startBodySchema = z.strictObject({
  input: z.string().min(1),
  session_id: z.string().min(1).max(128).optional(),
  context: contextBodySchema.optional(),
  options: startOptionsBodySchema.optional(),
  /** What the run is found by (`GET /v1/runs?metadata.<key>=<value>`): checked by the runtime (scalars, 32 keys, 4 KiB). */
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Tags to find the run by (`GET /v1/runs?tag=`): at most 20. */
  tags: z.array(z.string()).optional(),
  /** Start it later, at this instant (epoch ms or ISO 8601): `queued` until then. */
  start_at: z.union([z.number(), z.string()]).optional(),
});
export type StartBody = z.infer<typeof startBodySchema>;

function defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The runtime's start request for `body` sent by `principal`: `tenant_id` is forced to the
 * caller's tenant and `submitted_by` to the caller's name (`user_id` is the client's to say), session ids and idempotency keys are scoped to it, and a token limited to
 * some scopes cannot start a run with others.
 */
export function toStartRequest(body: StartBody, principal: Principal): StartRequest {
  const { on_busy, interrupt, ...options } = body.options ?? {};
  return defined({
    input: body.input,
    sessionId: body.session_id,
    onBusy: on_busy,
    interrupt,
    context: toRunContext(body.context ?? {}, principal),
    options: toRunOptions(options),
    metadata: body.metadata as StartRequest['metadata'],
    tags: body.tags,
    startAt: body.start_at,
  });
}

/** A run's context as `principal` may give it: its tenant and name forced, its scope within the caller's. */
export function toRunContext(context: z.infer<typeof contextBodySchema>, principal: Principal): RunUserContext {
  const { user_id, scope, ...rest } = context;
  if (principal.scope && scope?.some((s) => !principal.scope!.includes(s))) {
    const extra = scope.filter((s) => !principal.scope!.includes(s));
    throw httpError('auth.forbidden', `'${principal.name}' may not start runs with scope ${extra.join(', ')}`, {
      details: { allowed_scope: principal.scope },
    });
  }
  return defined({
    ...rest,
    user_id: user_id ?? principal.name,
    // Who really asked, for the audit trail: the token's name, whatever the body says.
    submitted_by: principal.name,
    tenant_id: principal.tenant,
    scope: scope ?? (principal.scope ? [...principal.scope] : undefined),
  });
}

/** A run's options as the runtime takes them (camelCase). */
export function toRunOptions(body: z.infer<typeof optionsBodySchema> | undefined): RunOptions {
  const budget = body?.budget;
  return defined({
    idempotencyKey: body?.idempotency_key,
    maxSteps: body?.max_steps,
    budget: budget
      ? defined({
          maxLlmCalls: budget.max_llm_calls,
          maxToolCalls: budget.max_tool_calls,
          maxTokens: budget.max_tokens,
          maxCostUsd: budget.max_cost_usd,
          timeoutMs: budget.timeout_ms,
        })
      : undefined,
    onBudgetExceeded: body?.on_budget_exceeded,
    expiresIn: body?.expires_in,
    onExpire: body?.on_expire,
  });
}
