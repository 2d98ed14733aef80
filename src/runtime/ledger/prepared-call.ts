/**
 * The calls of a step, prepared for the executor: each validated (zod) and put through policy,
 * with its ledger row so far. The rows and events they produce are the ledger's (`ledger.ts`).
 */
import { createFailure, type Failure } from '../../failure.js';
import { decide, type PolicyOutcome } from '../../policy/index.js';
import { HUMAN_ASK, unusableSchema, type HumanAskInput } from '../../tools/human-ask.js';
import { stepAgentOf, type LiveRun, type RuntimeEnv } from '../drive/env.js';
import { stepCalls, type LedgerCall } from './ledger.js';

/** Statuses of a call that ran and whose output (a result, an error) the model was shown. */
const TAINTING: ReadonlySet<string> = new Set(['succeeded', 'failed', 'unknown']);

/** One call of the step, checked and ready to run (or settled without running). */
export interface PreparedCall extends LedgerCall {
  /** Arguments after zod parsing (defaults applied), when valid. */
  parsed: unknown;
  /** `ask`: a question for a person (`human.ask`), answered instead of run. */
  verdict: 'allow' | 'approval' | 'ask' | 'invalid' | 'not_found' | 'denied';
  failure: Failure | null;
  /** Why the policy asks a human, when it says. */
  policyReason?: string;
  /** What the policy said about the wait: the role it escalated to, and how long the wait lasts. */
  policyWait?: Pick<PolicyOutcome, 'role' | 'expiresIn' | 'onExpire'> & { escalated: boolean };
}

/** Validates and applies policy to each call of a step (the executor's view; decisions use `stepCalls`). */
export function prepareCalls(env: RuntimeEnv, live: LiveRun, runId: string, stepIndex: number): PreparedCall[] {
  // The agent that planned the step: its tools and policy (the top of the handoff stack then).
  const agent = stepAgentOf(env, live, stepIndex);
  // Output of a tool that does not vouch for it, taken in by an earlier step: whatever the call
  // returned, or the error it failed with (the model reads both), from any call that ran.
  const untrusted = [...live.driver.memory.ledger.values()].some(
    (row) =>
      row.step_index < stepIndex &&
      row.started_at !== null &&
      TAINTING.has(row.status) &&
      stepAgentOf(env, live, row.step_index).tools.get(row.tool)?.trustedOutput === false,
  );
  return stepCalls(env, live, runId, stepIndex).map((base): PreparedCall => {
    const { tool } = base;
    if (!tool) {
      const known = [...agent.tools.keys()].join(', ');
      const failure = createFailure('tool.not_found', `Unknown tool '${base.toolName}'. Available tools: ${known}`);
      return { ...base, tool, parsed: undefined, verdict: 'not_found', failure };
    }
    if (base.argsError !== undefined) {
      const failure = createFailure(
        'tool.invalid_arguments',
        `Arguments for tool '${tool.name}' are not valid JSON: ${base.argsError}`,
      );
      return { ...base, tool, parsed: undefined, verdict: 'invalid', failure };
    }
    const parsed = tool.input.safeParse(base.args);
    if (!parsed.success) {
      const failure = createFailure('tool.invalid_arguments', `Invalid arguments for tool '${tool.name}'`, {
        details: { issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message, code: i.code })) },
      });
      return { ...base, tool, parsed: undefined, verdict: 'invalid', failure };
    }
    if (tool.name === HUMAN_ASK) {
      // A question: answered by a person, never run, so no policy decides it.
      const failure = unusableSchema(parsed.data as HumanAskInput);
      if (failure) return { ...base, tool, parsed: undefined, verdict: 'invalid', failure };
      return { ...base, tool, parsed: parsed.data, verdict: 'ask', failure: null };
    }
    const outcome = decide(agent.policy, {
      tool,
      args: parsed.data,
      context: live.context,
      untrusted,
    });
    const { decision: verdict, reason } = outcome;
    if (verdict === 'deny') {
      const failure = createFailure('policy.denied', `Policy denied tool '${tool.name}'${reason ? `: ${reason}` : ''}`);
      return { ...base, tool, parsed: parsed.data, verdict: 'denied', failure };
    }
    return {
      ...base,
      tool,
      parsed: parsed.data,
      verdict: verdict === 'allow' ? 'allow' : 'approval',
      failure: null,
      ...(reason ? { policyReason: reason } : {}),
      ...(verdict === 'escalate' || outcome.expiresIn !== undefined
        ? {
            policyWait: {
              escalated: verdict === 'escalate',
              ...(outcome.role !== undefined ? { role: outcome.role } : {}),
              ...(outcome.expiresIn !== undefined ? { expiresIn: outcome.expiresIn } : {}),
              ...(outcome.onExpire !== undefined ? { onExpire: outcome.onExpire } : {}),
            },
          }
        : {}),
    };
  });
}
