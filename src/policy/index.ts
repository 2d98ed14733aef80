/**
 * Policy: code, decided by the runtime and never by the model. The default goes by risk
 * (`low` runs, `high` needs approval, `destructive` is denied); a user policy sees the tool,
 * the arguments and the run's context and may decide otherwise.
 */
import type { AnyTool, RunUserContext } from '../tools/define-tool.js';

export const POLICY_DECISIONS = ['allow', 'needs_approval', 'deny'] as const;
export type PolicyDecision = (typeof POLICY_DECISIONS)[number];

/** What a policy is asked about. */
export interface PolicyRequest {
  tool: AnyTool;
  args: unknown;
  context: RunUserContext;
  /** True once output of an earlier tool call has entered the run: a policy may be stricter then. */
  untrusted: boolean;
  /** What the default policy would decide. */
  defaultDecision: PolicyDecision;
}

/** A policy's answer, with an optional reason the model and the user are shown. */
export type PolicyVerdict = PolicyDecision | { decision: PolicyDecision; reason?: string };

/** A user-supplied policy; returning `undefined` keeps the default. */
export type Policy = (request: PolicyRequest) => PolicyVerdict | undefined;

/** The default decision for a tool, by its risk. */
export function defaultDecision(tool: AnyTool): PolicyDecision {
  switch (tool.risk) {
    case 'low':
      return 'allow';
    case 'high':
      return 'needs_approval';
    case 'destructive':
      return 'deny';
  }
}

/** Decides one call: the user policy if it answers, else the default. */
export function decide(
  policy: Policy | undefined,
  request: Omit<PolicyRequest, 'defaultDecision'>,
): { decision: PolicyDecision; reason: string | null } {
  const fallback = defaultDecision(request.tool);
  const verdict = policy?.({ ...request, defaultDecision: fallback }) ?? fallback;
  return typeof verdict === 'string'
    ? { decision: verdict, reason: null }
    : { decision: verdict.decision, reason: verdict.reason ?? null };
}
