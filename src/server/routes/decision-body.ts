/**
 * The body of `POST /v1/runs/{id}/approvals/{approval_id}` (snake_case) and how it becomes the
 * runtime's `HumanDecision`. Each decision takes its own fields only: a field another decision
 * takes is `400 input.invalid` naming it, before anything is read or changed.
 */
import { z } from 'zod';
import { BatonError, type Approval, type HumanDecision, type Runtime } from '../../index.js';

const count = z.number().int().nonnegative();

/** The limits an `extend` sets (absolute; `timeout_ms` is more time from now). */
const limitsSchema = z.strictObject({
  max_steps: count.optional(),
  max_llm_calls: count.optional(),
  max_tool_calls: count.optional(),
  max_tokens: count.optional(),
  max_cost_usd: z.number().nonnegative().optional(),
  timeout_ms: z.number().int().positive().optional(),
});

/** The decisions a person can send, and the fields each one takes besides `reason`. */
const FIELDS = {
  approve: { takes: ['resolution'], needs: [] },
  reject: { takes: ['terminate', 'compensate'], needs: [] },
  edit: { takes: ['args', 'tool_call_id'], needs: ['args'] },
  respond: { takes: ['output', 'tool_call_id'], needs: ['output'] },
  answer: { takes: ['answer'], needs: ['answer'] },
  extend: { takes: ['limits'], needs: ['limits'] },
  end: { takes: [], needs: [] },
  resume: { takes: [], needs: [] },
} as const satisfies Record<HumanDecision['decision'], { takes: readonly string[]; needs: readonly string[] }>;

const DECISIONS = Object.keys(FIELDS) as (keyof typeof FIELDS)[];
const OPTIONAL_FIELDS = ['resolution', 'terminate', 'compensate', 'args', 'tool_call_id', 'output', 'answer', 'limits'];

/** The decision body, checked field by field against the decision it names. */
export const decisionBodySchema = z
  .strictObject({
    decision: z.enum(DECISIONS as [keyof typeof FIELDS, ...(keyof typeof FIELDS)[]]),
    reason: z.string().max(2000).optional(),
    /** With `approve` of an uncertain side effect: run it again, or record it as done. */
    resolution: z.enum(['retry', 'done']).optional(),
    /** With `reject`: end the run `failed` (`rejected`) instead of telling the model. */
    terminate: z.boolean().optional(),
    /** With `reject` and `terminate`: undo the run's completed calls (newest first) before it ends. */
    compensate: z.boolean().optional(),
    /** With `edit`: the arguments the call runs with instead of the model's (checked by the tool's schema). */
    args: z.unknown().optional(),
    /** With `edit` or `respond`: the call of the step it is about (needed when the step has more than one). */
    tool_call_id: z.string().min(1).max(300).optional(),
    /** With `respond`: the call's result, given by the person instead of running it (checked by the tool's output schema). */
    output: z.unknown().optional(),
    /** With `answer`: the answer to the run's question (checked by its JSON Schema). */
    answer: z.unknown().optional(),
    /** With `extend`: the run's new limits. */
    limits: limitsSchema.optional(),
  })
  .superRefine((body, ctx) => {
    const { takes, needs } = FIELDS[body.decision];
    for (const field of OPTIONAL_FIELDS) {
      const given = (body as Record<string, unknown>)[field] !== undefined;
      if (given && !(takes as readonly string[]).includes(field)) {
        const owners = DECISIONS.filter((d) => (FIELDS[d].takes as readonly string[]).includes(field));
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `'${field}' goes with ${owners.map((d) => `'${d}'`).join(' or ')} only`,
        });
      }
      if (!given && (needs as readonly string[]).includes(field)) {
        ctx.addIssue({ code: 'custom', path: [field], message: `'${body.decision}' needs '${field}'` });
      }
    }
    if (body.compensate !== undefined && body.terminate !== true) {
      ctx.addIssue({
        code: 'custom',
        path: ['compensate'],
        message: "'compensate' goes with 'reject' and 'terminate: true' only",
      });
    }
    if (body.limits && Object.keys(body.limits).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['limits'], message: "'limits' names no limit to raise" });
    }
  });
export type DecisionBody = z.infer<typeof decisionBodySchema>;

function defined<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** The runtime's decision for `body`, recorded as decided `by` the caller. */
export function toHumanDecision(body: DecisionBody, by: string): HumanDecision {
  const reason = body.reason === undefined ? {} : { reason: body.reason };
  const call = body.tool_call_id === undefined ? {} : { toolCallId: body.tool_call_id };
  switch (body.decision) {
    case 'approve':
      return { decision: 'approve', by, ...reason, ...(body.resolution ? { resolution: body.resolution } : {}) };
    case 'reject':
      return {
        decision: 'reject',
        by,
        ...reason,
        ...(body.terminate === undefined ? {} : { terminate: body.terminate }),
        ...(body.compensate ? { compensate: true } : {}),
      };
    case 'edit':
      return { decision: 'edit', by, args: body.args, ...call, ...reason };
    case 'respond':
      return { decision: 'respond', by, output: body.output, ...call, ...reason };
    case 'answer':
      return { decision: 'answer', by, answer: body.answer, ...reason };
    case 'extend': {
      const l = body.limits ?? {};
      const limits = defined({
        maxSteps: l.max_steps,
        maxLlmCalls: l.max_llm_calls,
        maxToolCalls: l.max_tool_calls,
        maxTokens: l.max_tokens,
        maxCostUsd: l.max_cost_usd,
        timeoutMs: l.timeout_ms,
      });
      return { decision: 'extend', by, limits, ...reason };
    }
    case 'end':
      return { decision: 'end', by, ...reason };
    case 'resume':
      return { decision: 'resume', by, ...reason };
  }
}

/** The body of `POST /v1/runs/{id}/inputs/{input_id}`: the answer (any JSON its schema takes) and why. */
export const answerBodySchema = z
  .strictObject({
    answer: z.unknown(),
    reason: z.string().max(2000).optional(),
  })
  .refine((body) => body.answer !== undefined, { message: "An answer needs 'answer'", path: ['answer'] });

/** The runtime's names of the limits an `extend` sets, and the body's. */
const LIMIT_NAMES: Record<string, string> = {
  maxSteps: 'max_steps',
  maxLlmCalls: 'max_llm_calls',
  maxToolCalls: 'max_tool_calls',
  maxTokens: 'max_tokens',
  maxCostUsd: 'max_cost_usd',
  timeoutMs: 'timeout_ms',
};

/** A refused `extend`, told in the body's terms (`max_llm_calls`, not the runtime's `maxLlmCalls`). */
function inBodyTerms(error: unknown): unknown {
  if (!(error instanceof BatonError) || error.failure.code !== 'input.invalid') return error;
  const { failure } = error;
  const message = failure.message.replace(/'(max[A-Za-z]+|timeoutMs)'/g, (all, name: string) =>
    LIMIT_NAMES[name] ? `'${LIMIT_NAMES[name]}'` : all,
  );
  const key = failure.details?.key;
  const details =
    typeof key === 'string' && LIMIT_NAMES[key] ? { ...failure.details, key: LIMIT_NAMES[key] } : failure.details;
  return new BatonError({ ...failure, message, ...(details ? { details } : {}) });
}

/**
 * Decides wait `waitId` of run `runId` as `body` says, recorded as decided `by`: what the route
 * and the command line in process both do, so both refuse the same bodies the same way.
 */
export async function decideBody(
  runtime: Pick<Runtime, 'decide'>,
  runId: string,
  waitId: string,
  body: DecisionBody,
  by: string,
): Promise<Approval> {
  const decision = toHumanDecision(body, by);
  try {
    return await runtime.decide(runId, waitId, decision);
  } catch (error) {
    throw decision.decision === 'extend' ? inBodyTerms(error) : error;
  }
}
