/**
 * The bodies of `POST /v1/runs/{id}/fork` and `POST /v1/reruns`, and how each becomes the
 * runtime's request: shared by the routes and by the command line in process, so a body is
 * refused the same way in both (snake_case; unknown fields refused).
 */
import { z } from 'zod';
import type { ForkRequest, RerunFilter } from '../../index.js';
import { givenDecisionSchema } from '../../runtime/registry/fork-run.js';
import type { Principal } from '../auth/principal.js';
import { contextBodySchema, optionsBodySchema, toRunContext, toRunOptions } from './start-run.js';

/** `POST /v1/runs/{id}/fork`: the step, and what changes there. */
export const forkBodySchema = z.strictObject({
  at_step: z.number().int(),
  /** The decision of that step instead of the planner's: `{ type: "tool_calls", calls: [{ tool, args }] }` or `{ type: "final", answer }`. */
  decision: givenDecisionSchema.optional(),
  /** Only at step 0. */
  input: z.string().min(1).optional(),
  /** Only at step 0. */
  context: contextBodySchema.optional(),
  options: optionsBodySchema.optional(),
  repeat_effects: z.enum(['ask', 'allow']).optional(),
  /** To fork another agent's run for this one (the server's agent), its name. */
  agent: z.string().min(1).max(64).optional(),
});
export type ForkBody = z.infer<typeof forkBodySchema>;

/** The runtime's fork request for `body` from `by` (over HTTP, the context as the caller may give it). */
export function toForkRequest(body: ForkBody, by: string, principal?: Principal): ForkRequest {
  const context = body.context && (principal ? toRunContext(body.context, principal) : body.context);
  return {
    atStep: body.at_step,
    ...(body.decision ? { decision: body.decision } : {}),
    ...(body.input !== undefined ? { input: body.input } : {}),
    ...(context ? { context } : {}),
    options: toRunOptions(body.options),
    ...(body.repeat_effects ? { repeatEffects: body.repeat_effects } : {}),
    ...(body.agent ? { agent: body.agent } : {}),
    by,
  };
}

/** The fields that say which runs a rerun forks. */
export const RERUN_FILTERS = ['status', 'failure_code', 'since', 'session_id'] as const;

/** `POST /v1/reruns`: which finished runs to fork at the step they ended in. */
export const rerunBodySchema = z
  .strictObject({
    status: z.enum(['failed', 'succeeded']).optional(),
    failure_code: z.string().min(1).max(100).optional(),
    /** Only runs that ended at or after this instant (epoch ms). */
    since: z.number().int().nonnegative().optional(),
    session_id: z.string().min(1).max(128).optional(),
    dry_run: z.boolean().optional(),
    batch_size: z.number().int().min(1).max(200).optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
    repeat_effects: z.enum(['ask', 'allow']).optional(),
  })
  // A rerun forks many runs: it names which, or is a dry run (no body forks every failed run by mistake).
  .refine((body) => body.dry_run === true || RERUN_FILTERS.some((name) => body[name] !== undefined), {
    message: `Name the runs to rerun (${['status', 'failure_code', 'since', 'session_id'].join(', ')}), or ask for a dry_run`,
  });
export type RerunBody = z.infer<typeof rerunBodySchema>;

/** The runtime's rerun filter for `body` from `by`, within `tenantId` (every tenant's when undefined). */
export function toRerunFilter(body: RerunBody, by: string, tenantId: string | undefined): RerunFilter {
  return {
    ...(body.status ? { status: body.status } : {}),
    ...(body.failure_code ? { failureCode: body.failure_code } : {}),
    ...(body.since !== undefined ? { since: body.since } : {}),
    ...(body.session_id ? { sessionId: body.session_id } : {}),
    ...(body.dry_run ? { dryRun: true } : {}),
    ...(body.batch_size ? { batchSize: body.batch_size } : {}),
    ...(body.limit ? { limit: body.limit } : {}),
    ...(body.repeat_effects ? { repeatEffects: body.repeat_effects } : {}),
    ...(tenantId !== undefined ? { tenantId } : {}),
    by,
  };
}
