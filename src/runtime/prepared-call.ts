/**
 * The calls of a step, prepared: each validated (zod) and put through policy, with its ledger
 * row so far; and the shapes their ledger rows and `result` events take.
 */
import { RISKS, type Risk } from '../../machines/types.js';
import { createFailure, type Failure } from '../failure.js';
import { decide } from '../policy/index.js';
import type { ApprovalRow, ToolCallRow } from '../store/index.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { ToolResult } from '../tools/tool-result.js';
import type { LiveRun, RuntimeEnv } from './env.js';
import { hashOf, toolCallId } from './ids.js';
import { loadDecision } from './planner-actor.js';

/** One call of the step, checked and ready to run (or settled without running). */
export interface PreparedCall {
  id: string;
  index: number;
  toolName: string;
  tool: AnyTool | undefined;
  args: unknown;
  argsHash: string;
  /** Arguments after zod parsing (defaults applied), when valid. */
  parsed: unknown;
  verdict: 'allow' | 'approval' | 'invalid' | 'not_found' | 'denied';
  failure: Failure | null;
  /** Why the policy asks a human, when it says. */
  policyReason?: string;
  row: ToolCallRow | undefined;
}

/** Validates and applies policy to each call of a step. */
export function prepareCalls(env: RuntimeEnv, live: LiveRun, runId: string, stepIndex: number): PreparedCall[] {
  const decision = loadDecision(env, runId, stepIndex);
  if (!decision || decision.type !== 'tool_calls') return [];
  // Output of a tool that does not vouch for it, taken in by an earlier step.
  const untrusted = [...live.driver.memory.ledger.values()].some(
    (row) =>
      row.step_index < stepIndex && row.status === 'succeeded' && env.tools.get(row.tool)?.trustedOutput === false,
  );
  return decision.calls.map((call, index) => {
    const id = toolCallId(runId, stepIndex, index);
    const base = {
      id,
      index,
      toolName: call.tool,
      args: call.args,
      argsHash: hashOf(call.args),
      row: live.driver.memory.ledger.get(id),
    };
    const tool = env.tools.get(call.tool);
    if (!tool) {
      const known = [...env.tools.keys()].join(', ');
      const failure = createFailure('tool.not_found', `Unknown tool '${call.tool}'. Available tools: ${known}`);
      return { ...base, tool, parsed: undefined, verdict: 'not_found', failure };
    }
    if (call.argsError !== undefined) {
      const failure = createFailure(
        'tool.invalid_arguments',
        `Arguments for tool '${tool.name}' are not valid JSON: ${call.argsError}`,
      );
      return { ...base, tool, parsed: undefined, verdict: 'invalid', failure };
    }
    const parsed = tool.input.safeParse(call.args);
    if (!parsed.success) {
      const failure = createFailure('tool.invalid_arguments', `Invalid arguments for tool '${tool.name}'`, {
        details: { issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message, code: i.code })) },
      });
      return { ...base, tool, parsed: undefined, verdict: 'invalid', failure };
    }
    const { decision: verdict, reason } = decide(env.policy, {
      tool,
      args: parsed.data,
      context: live.context,
      untrusted,
    });
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
    };
  });
}

/** The ledger row of a call in a given status. */
export function callRow(
  runId: string,
  stepIndex: number,
  call: PreparedCall,
  patch: Pick<ToolCallRow, 'status'> & Partial<ToolCallRow>,
): ToolCallRow {
  return {
    id: call.id,
    run_id: runId,
    step_index: stepIndex,
    call_index: call.index,
    tool: call.toolName,
    tool_version: call.tool?.version ?? null,
    effect: call.tool?.effect ?? null,
    args: JSON.stringify(call.args ?? null),
    args_hash: call.argsHash,
    result: null,
    attempts: call.row?.attempts ?? 0,
    started_at: call.row?.started_at ?? null,
    finished_at: null,
    deadline_at: call.row?.deadline_at ?? null,
    ...patch,
  };
}

/** The data of the `result` event of a settled call. */
export function resultEventData(call: PreparedCall, status: string, result: ToolResult): Record<string, unknown> {
  return {
    tool_call_id: call.id,
    tool: call.toolName,
    status,
    ok: result.status === 'ok',
    ...(result.failure ? { failure: result.failure } : {}),
    truncated: result.truncated,
    duration_ms: result.durationMs,
  };
}

/**
 * How an interrupted call was resolved, as its events record it: run again (`read`,
 * `idempotent`), found done by `reconcile()`, not found done and so run again, sent to a human
 * (`unsafe`), or run again because a human chose `retry`.
 */
export type Recovery = 'rerun' | 'reconciled' | 'reconciled_not_done' | 'to_human' | 'human_retry';

/** A new, pending approval of `calls`: bound to their ids and the hash of their arguments. */
export function pendingApproval(
  id: string,
  runId: string,
  stepIndex: number,
  kind: 'tool' | 'uncertain',
  calls: PreparedCall[],
): ApprovalRow {
  return {
    id,
    run_id: runId,
    step_index: stepIndex,
    kind,
    tool_call_ids: JSON.stringify(calls.map((c) => c.id)),
    args_hash: approvalHash(calls),
    status: 'pending',
    resolution: null,
    decided_by: null,
    reason: null,
    created_at: Date.now(),
    decided_at: null,
    votes: '[]',
  };
}

/** The highest declared risk among calls (null when none of their tools is known). */
export function highestRisk(calls: readonly PreparedCall[]): Risk | null {
  let highest: Risk | null = null;
  for (const call of calls) {
    const risk = call.tool?.risk;
    if (risk && (highest === null || RISKS.indexOf(risk) > RISKS.indexOf(highest))) highest = risk;
  }
  return highest;
}

/** The hash an approval binds to: the exact call ids and their argument hashes. */
export function approvalHash(calls: PreparedCall[]): string {
  return hashOf(calls.map((c) => [c.id, c.argsHash]));
}
