/**
 * Policy: code, decided by the runtime and never by the model. The default goes by risk
 * (`low` runs, `high` needs approval, `destructive` is denied), and is stricter once untrusted
 * output has entered the run (any tool but a `read` needs approval); a user policy sees the
 * tool, the arguments, the run's context and `untrusted`, and may decide otherwise.
 */
import type { AnyTool, RunUserContext } from '../tools/define-tool.js';
import type { OnExpire } from '../../machines/types.js';

/**
 * `escalate`: the call waits for a person with the role the answer names (default `approve`,
 * e.g. `admin`), who allows it once or denies it (the run's wait reason is `policy`).
 */
export const POLICY_DECISIONS = ['allow', 'needs_approval', 'deny', 'escalate'] as const;
export type PolicyDecision = (typeof POLICY_DECISIONS)[number];

/** What a policy is asked about. */
export interface PolicyRequest {
  tool: AnyTool;
  args: unknown;
  context: RunUserContext;
  /**
   * True once output of a tool that declares `trustedOutput: false` (a web page, a mail) has
   * entered the run: what the model proposes may then be steered by whoever wrote that content.
   */
  untrusted: boolean;
  /** What the default policy would decide. */
  defaultDecision: PolicyDecision;
}

/** A policy's answer, with an optional reason the model and the user are shown. */
export type PolicyVerdict =
  | PolicyDecision
  | {
      decision: PolicyDecision;
      reason?: string;
      /** With `escalate`: the role that may decide (default `approve`). */
      role?: string;
      /** With `escalate` or `needs_approval`: how long the wait lasts (ms), and what happens then. */
      expiresIn?: number;
      onExpire?: OnExpire;
    };

/** What a policy decided about one call. */
export interface PolicyOutcome {
  decision: PolicyDecision;
  reason: string | null;
  /** The role that may decide an escalated call. */
  role?: string;
  expiresIn?: number;
  onExpire?: OnExpire;
}

/** A user-supplied policy; returning `undefined` keeps the default. */
export type Policy = (request: PolicyRequest) => PolicyVerdict | undefined;

/** Why the default policy asks a human about a low-risk call once untrusted output is in the run. */
export const UNTRUSTED_REASON = 'untrusted tool output has entered this run';

/** The default decision for a tool, by its risk, and stricter once the run holds untrusted output. */
export function defaultDecision(tool: AnyTool, untrusted = false): PolicyDecision {
  switch (tool.risk) {
    case 'low':
      return untrusted && tool.effect !== 'read' ? 'needs_approval' : 'allow';
    case 'high':
      return 'needs_approval';
    case 'destructive':
      return 'deny';
  }
}

/** Decides one call: the user policy if it answers, else the default. */
export function decide(policy: Policy | undefined, request: Omit<PolicyRequest, 'defaultDecision'>): PolicyOutcome {
  const fallback = defaultDecision(request.tool, request.untrusted);
  const verdict = policy?.({ ...request, defaultDecision: fallback });
  if (verdict === undefined) {
    const stricter = fallback !== defaultDecision(request.tool);
    return { decision: fallback, reason: stricter ? UNTRUSTED_REASON : null };
  }
  if (typeof verdict === 'string') return { decision: verdict, reason: null };
  return {
    decision: verdict.decision,
    reason: verdict.reason ?? null,
    ...(verdict.role !== undefined ? { role: verdict.role } : {}),
    ...(verdict.expiresIn !== undefined ? { expiresIn: verdict.expiresIn } : {}),
    ...(verdict.onExpire !== undefined ? { onExpire: verdict.onExpire } : {}),
  };
}
