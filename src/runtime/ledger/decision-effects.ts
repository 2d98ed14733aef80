/**
 * What a decision on a wait does, apart from deciding it (`approvals.ts`): the machine event it
 * sends, how it is stored (its resolution, what the person gave, the hash it binds), the ledger
 * rows it settles without running a call (a refusal, an answer, a response, an uncertain call
 * recorded), and the event a stored decision calls for when the run is loaded again.
 */
import type { ExtendedLimits, RunEvent } from '../../../machines/types.js';
import { createFailure } from '../../failure.js';
import {
  SETTLED_TOOL_CALL_STATUSES,
  type ApprovalResolution,
  type ApprovalRow,
  type ToolCallStatus,
} from '../../store/index.js';
import { toErrorResult, type ToolResult } from '../../tools/tool-result.js';
import type { LiveRun, RuntimeEnv } from '../drive/env.js';
import { fromExtendedLimitsData, toExtendedLimitsData } from '../model/event-data.js';
import type { HumanDecisionName, RepeatedCall, UncertainResolution } from '../model/types.js';
import { approvalHash, settleCall, stepCalls, withEdits, type LedgerCall } from './ledger.js';
import { asksInFlight } from '../model/rows.js';
import { isToolQuestion } from './question-rows.js';

/** A decision as the runtime applies it (checked already: arguments, output, answer, limits). */
export interface DecisionInput {
  decision: HumanDecisionName;
  by: string;
  reason: string | null;
  /** For uncertain calls: `retry` (run again) or `done` (record that it happened). */
  resolution?: UncertainResolution | undefined;
  /** For rejections of tool approvals: end the run `failed` / `rejected` instead of telling the model. */
  terminate?: boolean | undefined;
  /** With `terminate`: undo the run's completed calls (newest first) before it ends. */
  compensate?: boolean | undefined;
  /** `edit`: a person's arguments for one call of the step. */
  edit?: { toolCallId: string; args: unknown };
  /** `respond`: a person's output for one call, which then does not run. */
  respond?: { toolCallId: string; output: unknown };
  /** `answer`: the answer to the question. */
  answer?: unknown;
  /** `extend`: the new limits (and deadline) of a budget wait. */
  extend?: { limits: ExtendedLimits; deadlineAt?: number | null };
}

/** True for a decision that lets the run go on as asked (every one but `reject` and `end`). */
export function approves(input: Pick<DecisionInput, 'decision'>): boolean {
  return input.decision !== 'reject' && input.decision !== 'end';
}

/** A person's output as a call's result: recorded as theirs. */
function givenResult(content: unknown, by: string, given: 'answer' | 'response'): ToolResult {
  return { status: 'ok', content, durationMs: 0, truncated: false, retryable: false, recordedBy: by, given };
}

export function settleWithoutRunning(
  env: RuntimeEnv,
  live: LiveRun,
  approval: ApprovalRow,
  input: DecisionInput,
): void {
  const { driver } = live;
  const calls = stepCalls(env, live, approval.run_id, approval.step_index);
  const bound = new Set(JSON.parse(approval.tool_call_ids) as string[]);
  const write = (call: LedgerCall, status: ToolCallStatus, result: ToolResult) =>
    settleCall(driver, approval.step_index, call, status, result, { mode: 'write' });
  const because = input.reason ? `: ${input.reason}` : '';
  const call = calls.find((c) => bound.has(c.id));
  switch (approval.kind) {
    case 'budget':
    case 'pause':
      return;
    case 'input':
      if (!call) return;
      // A tool's question: the tool takes the answer (in flight, or running again with it).
      if (isToolQuestion(approval)) {
        if (input.decision === 'answer' || asksInFlight(approval)) return;
        const failure = createFailure(
          'tool.failed',
          `Tool '${call.toolName}' did not complete: ${input.by} did not answer its question${because}`,
        );
        write(call, 'failed', toErrorResult(failure));
        return;
      }
      if (input.decision === 'answer') write(call, 'succeeded', givenResult(input.answer, input.by, 'answer'));
      else {
        const failure = createFailure('tool.failed', `${input.by} did not answer the question${because}`);
        write(call, 'failed', toErrorResult(failure));
      }
      return;
    case 'uncertain':
      if (!call) return;
      if (input.decision === 'approve' && input.resolution === 'done') {
        write(call, 'succeeded', {
          status: 'ok',
          content: `Recorded by ${input.by} as done${because}`,
          durationMs: 0,
          truncated: false,
          retryable: false,
          recordedBy: input.by,
        });
      } else if (!approves(input)) {
        const failure = createFailure(
          'tool.failed',
          `Tool '${call.toolName}' was interrupted and ${input.by} recorded that it did not take effect${because}`,
          { retryable: true },
        );
        write(call, 'failed', toErrorResult(failure));
      }
      return;
    case 'repeat':
      if (call) settleRepeat(driver, approval, call, input);
      return;
    case 'version': {
      if (!call || approves(input)) return;
      const failure = createFailure(
        'tool.version_mismatch',
        `${input.by} did not run tool '${call.toolName}' with version ${call.tool?.version ?? '?'}: the call was decided with another version${because}`,
      );
      write(call, 'rejected', toErrorResult(failure));
      return;
    }
    default:
      break;
  }
  if (input.respond) {
    const given = calls.find((c) => c.id === input.respond!.toolCallId);
    if (given) write(given, 'succeeded', givenResult(input.respond.output, input.by, 'response'));
    return;
  }
  if (approves(input)) return;
  // A rejected step goes back to the model: the refused calls say so, the rest were not run.
  for (const each of calls) {
    if (each.row && SETTLED_TOOL_CALL_STATUSES.has(each.row.status)) continue;
    const refused = bound.has(each.id);
    const failure = refused
      ? createFailure('policy.denied', `${input.by} rejected tool '${each.toolName}'${because}`)
      : createFailure('policy.denied', `Not run: the approval of this step was rejected`);
    write(each, refused ? 'rejected' : 'skipped', toErrorResult(failure));
  }
}

/**
 * A fork's call that would repeat its source's effect, decided: `done` takes the source's
 * result (the call does not run; its effect is the source's, so the row says it is copied from
 * there), a refusal tells the model it was not run, `retry` lets the executor run it.
 */
function settleRepeat(driver: LiveRun['driver'], approval: ApprovalRow, call: LedgerCall, input: DecisionInput): void {
  const because = input.reason ? `: ${input.reason}` : '';
  const source = (JSON.parse(approval.request ?? '{}') as { source?: RepeatedCall }).source;
  if (input.decision === 'approve' && input.resolution === 'done' && source) {
    const result: ToolResult = source.result ?? {
      status: 'ok',
      content: `Done already by call ${source.toolCallId} of run ${source.runId}`,
      durationMs: 0,
      truncated: false,
      retryable: false,
    };
    const taken = { ...call, idempotencyKey: source.idempotencyKey };
    const row = settleCall(
      driver,
      approval.step_index,
      taken,
      source.status === 'succeeded' ? 'succeeded' : 'failed',
      {
        ...result,
        recordedBy: input.by,
      },
      { mode: 'write', extra: { repeat_of: source.toolCallId, resolution: 'done' } },
    );
    driver.writeToolCall({ ...row, copied_from: source.toolCallId });
    return;
  }
  if (approves(input)) return;
  const failure = createFailure(
    'policy.denied',
    `${input.by} did not let tool '${call.toolName}' run again: run ${source?.runId ?? '?'} made this call already (${source?.toolCallId ?? '?'})${because}`,
  );
  settleCall(driver, approval.step_index, call, 'rejected', toErrorResult(failure), { mode: 'write' });
}

/** The machine event of a decision. */
export function decisionEvent(approvalId: string, input: DecisionInput): RunEvent {
  const by = input.by;
  switch (input.decision) {
    case 'approve':
      return { type: 'approved', approvalId, by };
    case 'edit':
      return { type: 'edited', approvalId, by };
    case 'respond':
      return { type: 'responded', approvalId, by };
    case 'answer':
      return { type: 'answered', approvalId, by };
    case 'extend':
      return {
        type: 'extended',
        approvalId,
        by,
        limits: input.extend?.limits ?? {},
        ...(input.extend?.deadlineAt !== undefined ? { deadlineAt: input.extend.deadlineAt } : {}),
      };
    case 'end':
      return { type: 'rejected', approvalId, terminate: true, by };
    case 'resume':
      return { type: 'resumed', approvalId, by };
    case 'reject':
      return {
        type: 'rejected',
        approvalId,
        terminate: input.terminate === true,
        by,
        ...(input.terminate && input.compensate ? { compensate: true } : {}),
      };
  }
}

/** How a decision is stored: its resolution, what the person gave, and the hash it binds. */
export function storedDecision(env: RuntimeEnv, live: LiveRun, approval: ApprovalRow, input: DecisionInput) {
  let argsHash = approval.args_hash;
  let answer: Record<string, unknown> | null = null;
  if (input.edit) {
    const edits = [{ tool_call_id: input.edit.toolCallId, args: input.edit.args }];
    // Bound again to the arguments the person approved: the call runs with exactly those.
    const bound = new Set(JSON.parse(approval.tool_call_ids) as string[]);
    const calls = withEdits(stepCalls(env, live, approval.run_id, approval.step_index), edits, input.by, input.reason);
    argsHash = approvalHash(calls.filter((c) => bound.has(c.id)));
    answer = { edits };
  } else if (input.respond) answer = { tool_call_id: input.respond.toolCallId, output: input.respond.output };
  else if (input.decision === 'answer') answer = { answer: input.answer };
  else if (input.extend) {
    answer = {
      limits: toExtendedLimitsData(input.extend.limits),
      ...(input.extend.deadlineAt !== undefined ? { deadline_at: input.extend.deadlineAt } : {}),
    };
  }
  const resolution: ApprovalResolution | null =
    input.decision === 'approve'
      ? approval.kind === 'uncertain' || approval.kind === 'repeat'
        ? (input.resolution ?? 'retry')
        : null
      : input.decision === 'reject'
        ? input.terminate
          ? input.compensate
            ? 'compensate'
            : 'terminate'
          : null
        : input.decision;
  return { argsHash, answer, resolution };
}

/** The machine event a committed decision (or expiry) calls for, read back from its row. */
export function storedEvent(approval: ApprovalRow): RunEvent | undefined {
  const by = approval.decided_by ?? undefined;
  const answer = approval.answer ? (JSON.parse(approval.answer) as Record<string, unknown>) : {};
  if (approval.kind === 'child') {
    // Decided by the child run's end (`child-wait.ts`): its usage becomes the parent's.
    if (approval.status === 'pending') return undefined;
    const used = (answer.usage ?? {}) as Partial<Record<'llm_calls' | 'tool_calls' | 'tokens' | 'cost_usd', number>>;
    return {
      type: 'child_ended',
      approvalId: approval.id,
      usage: {
        llmCalls: used.llm_calls ?? 0,
        toolCalls: used.tool_calls ?? 0,
        tokens: used.tokens ?? 0,
        costUsd: used.cost_usd ?? 0,
      },
    };
  }
  // Decided by a poll that found the call's work ended (`task-wait.ts`): the call is settled already.
  if (approval.kind === 'task')
    return approval.status === 'pending' ? undefined : { type: 'task_ended', approvalId: approval.id };
  if (approval.status === 'expired') {
    return { type: 'expired', approvalId: approval.id, outcome: approval.resolution === 'end' ? 'end' : 'reject' };
  }
  if (approval.status === 'approved') {
    switch (approval.resolution) {
      case 'edit':
        return { type: 'edited', approvalId: approval.id, by };
      case 'respond':
        return { type: 'responded', approvalId: approval.id, by };
      case 'answer':
        return { type: 'answered', approvalId: approval.id, by };
      case 'resume':
        return { type: 'resumed', approvalId: approval.id, by };
      case 'extend': {
        const deadline = answer.deadline_at as number | null | undefined;
        return {
          type: 'extended',
          approvalId: approval.id,
          by,
          limits: fromExtendedLimitsData(answer.limits as Record<string, number | null>),
          ...(deadline !== undefined ? { deadlineAt: deadline } : {}),
        };
      }
      default:
        return { type: 'approved', approvalId: approval.id, by };
    }
  }
  if (approval.status === 'rejected') {
    const compensate = approval.resolution === 'compensate';
    return {
      type: 'rejected',
      approvalId: approval.id,
      terminate: compensate || approval.resolution === 'terminate' || approval.resolution === 'end',
      by,
      ...(compensate ? { compensate } : {}),
    };
  }
  return undefined;
}
