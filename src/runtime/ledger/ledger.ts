/**
 * The ledger: one module for what a tool call and an approval are on disk. The status
 * vocabulary (one const list, `store/vocabulary.ts`), the calls of a step as the planner
 * journaled them, the row of a call in each status, and "settle": a call's final row and its
 * `result` event (built by `toSettledCall`, as every settled call is), used alike by the
 * executor (running calls) and by human decisions (refusing them, or recording an uncertain
 * one). Approvals: the pending row, bound to call ids and their argument hashes, and the
 * failure of a second decision.
 */
import { RISKS, type ExpiryOutcome, type Risk } from '../../../machines/types.js';
import { createFailure, type Failure } from '../../failure.js';
import type { ApprovalKind, ApprovalRow, ToolCallRow, ToolCallStatus } from '../../store/index.js';
import type { AnyTool } from '../../tools/define-tool.js';
import type { ToolResult } from '../../tools/tool-result.js';
import { stepAgentOf, type AgentEnv, type LiveRun, type RuntimeEnv } from '../drive/env.js';
import { hashOf, stepApprovalId, toolCallId } from '../model/ids.js';
import { askHuman, HUMAN_ASK } from '../../tools/human-ask.js';
import { HANDOFF_BACK, handoffBackTool } from '../../tools/handoff-back.js';
import { loadDecision } from '../drive/run-memory.js';
import type { RunDriver } from '../drive/run-driver.js';
import { toSettledCall } from '../drive/settled-call.js';

/** One call of a step as the planner journaled it, with its ledger row so far. */
export interface LedgerCall {
  id: string;
  index: number;
  toolName: string;
  tool: AnyTool | undefined;
  args: unknown;
  argsHash: string;
  /** Why the arguments could not be read, when the model sent invalid JSON. */
  argsError?: string | undefined;
  row: ToolCallRow | undefined;
  /** Set when a person approved the step with other arguments for this call (JSON `{ proposed_args, by, reason }`). */
  edited?: string;
  /** The idempotency key the call runs with when it is not its id (a fork's repeat of its source's idempotent call). */
  idempotencyKey?: string;
  /** For a fork's call: the source's call whose effect this one repeats (recorded on its `action` event). */
  repeatOf?: string;
}

/** A person's arguments for one call of a step, as an `edit` decision stores them. */
export interface CallEdit {
  tool_call_id: string;
  args: unknown;
}

/** The edits an approval's decision made, if it was approved with edited arguments. */
export function editsOf(approval: ApprovalRow | undefined): CallEdit[] {
  if (!approval || approval.resolution !== 'edit' || !approval.answer) return [];
  return (JSON.parse(approval.answer) as { edits?: CallEdit[] }).edits ?? [];
}

/** Calls with a person's arguments in place of the model's, each marked as edited and by whom. */
export function withEdits(
  calls: LedgerCall[],
  edits: readonly CallEdit[],
  by: string | null,
  reason: string | null,
): LedgerCall[] {
  if (edits.length === 0) return calls;
  return calls.map((call) => {
    const edit = edits.find((e) => e.tool_call_id === call.id);
    if (!edit) return call;
    return {
      ...call,
      args: edit.args,
      argsHash: hashOf(edit.args),
      argsError: undefined,
      edited: JSON.stringify({ proposed_args: call.args, by, reason }),
    };
  });
}

/** The calls of a step, from its journaled decision: no validation, no policy (see `prepareCalls`). */
export function stepCalls(env: RuntimeEnv, live: LiveRun, runId: string, stepIndex: number): LedgerCall[] {
  const decision = loadDecision(env.live(runId).driver.memory, stepIndex);
  if (!decision || decision.type !== 'tool_calls') return [];
  // A step approved with a person's arguments runs with those (the approval is bound to them).
  const approval = live.driver.memory.approvals.get(stepApprovalId(runId, stepIndex));
  const calls = decision.calls.map((call, index): LedgerCall => {
    const id = toolCallId(runId, stepIndex, index);
    return {
      id,
      index,
      toolName: call.tool,
      tool: toolOf(stepAgentOf(env, live, stepIndex), call.tool),
      args: call.args,
      argsHash: hashOf(call.args),
      argsError: call.argsError,
      row: live.driver.memory.ledger.get(id),
    };
  });
  return withEdits(calls, editsOf(approval), approval?.decided_by ?? null, approval?.reason ?? null);
}

const BUILT_IN_ASK = askHuman();

/**
 * A tool of an agent by name; `human.ask` is known even to an agent that does not list it (a
 * scripted `ask`), and so is `handoff.back` (offered to an agent a conversation was handed to).
 */
export function toolOf(agent: Pick<AgentEnv, 'tools'>, name: string): AnyTool | undefined {
  return (
    agent.tools.get(name) ?? (name === HUMAN_ASK ? BUILT_IN_ASK : name === HANDOFF_BACK ? handoffBackTool : undefined)
  );
}

/** The ledger row of a call in a given status. */
export function callRow(
  runId: string,
  stepIndex: number,
  call: LedgerCall,
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
    edited: call.edited ?? call.row?.edited ?? null,
    copied_from: call.row?.copied_from ?? null,
    idempotency_key: call.idempotencyKey ?? call.row?.idempotency_key ?? null,
    child_run_id: call.row?.child_run_id ?? null,
    handle: call.row?.handle ?? null,
    ...patch,
  };
}

/**
 * How an interrupted call was resolved, as its events record it: run again (`read`,
 * `idempotent`), found done by `reconcile()`, not found done and so run again, sent to a human
 * (`unsafe`), run again because a human chose `retry`, or its work followed where it goes on (the
 * handle it saved: an MCP task), not started again.
 */
export type Recovery = 'rerun' | 'reconciled' | 'reconciled_not_done' | 'to_human' | 'human_retry' | 'followed';

/** What a wait asks beyond its calls: its request, the role that decides it, and its expiry. */
export interface WaitTerms {
  request?: unknown;
  role?: string;
  expiry?: WaitExpiry | null;
}

/** When a wait expires, and what happens then (`role`: who it goes to, for `escalate`). */
export interface WaitExpiry {
  at: number;
  outcome: ExpiryOutcome;
  role?: string;
}

/** A new, pending approval of `calls`: bound to their ids and the hash of their arguments. */
export function pendingApproval(
  id: string,
  runId: string,
  stepIndex: number,
  kind: ApprovalKind,
  calls: readonly LedgerCall[],
  terms: WaitTerms = {},
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
    request: terms.request === undefined ? null : JSON.stringify(terms.request),
    role: terms.role ?? 'approve',
    expires_at: terms.expiry?.at ?? null,
    expiry: terms.expiry
      ? JSON.stringify({ outcome: terms.expiry.outcome, ...(terms.expiry.role ? { role: terms.expiry.role } : {}) })
      : null,
    answer: null,
  };
}

/** The highest declared risk among calls (null when none of their tools is known). */
export function highestRisk(calls: readonly LedgerCall[]): Risk | null {
  let highest: Risk | null = null;
  for (const call of calls) {
    const risk = call.tool?.risk;
    if (risk && (highest === null || RISKS.indexOf(risk) > RISKS.indexOf(highest))) highest = risk;
  }
  return highest;
}

/** The hash an approval binds to: the exact call ids and their argument hashes. */
export function approvalHash(calls: readonly LedgerCall[]): string {
  return hashOf(calls.map((c) => [c.id, c.argsHash]));
}

/**
 * Gives a call its final row and the `result` event that says so (see `toSettledCall`). `stage`
 * buffers both for the run's next write (the executor); `write` writes them at once, for use
 * inside a staged unit (human decisions, which settle calls in the same unit as the decision).
 */
export function settleCall(
  driver: RunDriver,
  stepIndex: number,
  call: LedgerCall,
  status: ToolCallStatus,
  result: ToolResult,
  opts: { mode: 'stage' | 'write'; extra?: Record<string, unknown> },
): ToolCallRow {
  const settled = toSettledCall(callRow(driver.runId, stepIndex, call, { status }), { status, result }, opts.extra);
  call.row = settled.row;
  if (opts.mode === 'stage') {
    driver.stageToolCall(settled.row);
    driver.emit(settled.type, settled.data);
  } else {
    driver.writeToolCall(settled.row);
    driver.writeEvent(settled.type, settled.data);
  }
  return settled.row;
}

/** The failure of a decision on an approval that is no longer pending. */
export function alreadyDecided(approval: ApprovalRow): Failure {
  return createFailure(
    'approval.already_decided',
    `Approval '${approval.id}' was already ${approval.status} by ${approval.decided_by}`,
    { details: { status: approval.status, decided_by: approval.decided_by } },
  );
}
