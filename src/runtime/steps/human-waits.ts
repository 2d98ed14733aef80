/**
 * The waits the executor opens for a person: the approval of a step's calls (by the `approve`
 * role, or by the role a policy escalated to), and the question a `human.ask` call asks. Each is
 * a row of `approvals`, staged with the transition into `waiting_human`, so the wait and the
 * run's state commit together; a re-invoked executor finds the row and does not ask again.
 */
import type { ExecutorOutcome } from '../../../machines/types.js';
import { createFailure } from '../../failure.js';
import { askRoleOf, type HumanAskInput } from '../../tools/human-ask.js';
import { toErrorResult } from '../../tools/tool-result.js';
import { approvalHash, highestRisk, pendingApproval } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { expiryOf } from '../ledger/wait-terms.js';
import { failpoint } from '../model/failpoints.js';
import { inputWaitId, stepApprovalId } from '../model/ids.js';
import type { CallScope } from './call-scope.js';
import type { RunDriver } from '../drive/run-driver.js';
import type { WaitExpiryOptions } from '../model/types.js';
import type { QuestionRequest } from '../ledger/question-rows.js';

/** What the approval of a step says for the executor: wait, go on (some calls refused), or a mismatch. */
export type StepWait =
  | { kind: 'wait'; outcome: ExecutorOutcome }
  | { kind: 'go'; rejected: boolean }
  | { kind: 'error'; outcome: ExecutorOutcome };

/** The role, kind and expiry of the approval of `needing`: a policy's escalation names a role. */
function stepTerms(scope: CallScope, needing: readonly PreparedCall[]) {
  const escalated = needing.find((c) => c.policyWait?.escalated);
  const role = escalated?.policyWait?.role ?? 'approve';
  const timed = needing.find((c) => c.policyWait?.expiresIn !== undefined)?.policyWait;
  const tool = needing.find((c) => c.tool?.expiresIn !== undefined)?.tool;
  const expiry = expiryOf(Date.now(), timed, tool, scope.live.waits);
  return { escalated, role, expiry };
}

/**
 * Approval first, for the whole step: nothing in it runs before a person has answered. The
 * approval binds every call of the step that needs one, settled or not, so a step resumed after
 * some of its approved calls ran still matches what the person approved (with their edits).
 */
export function stepWait(scope: CallScope, calls: readonly PreparedCall[]): StepWait {
  const { live, runId, stepIndex } = scope;
  const { driver } = live;
  const needing = calls.filter((c) => c.verdict === 'approval');
  if (needing.length === 0) return { kind: 'go', rejected: false };
  const approvalId = stepApprovalId(runId, stepIndex);
  const approval = driver.memory.approvals.get(approvalId);
  const risk = highestRisk(needing);
  if (!approval) {
    failpoint('approval.requesting');
    const { escalated, role, expiry } = stepTerms(scope, needing);
    const reason = escalated ? ('policy' as const) : ('approval' as const);
    const row = pendingApproval(approvalId, runId, stepIndex, escalated ? 'policy' : 'tool', needing, {
      ...(escalated ? { request: { kind: 'policy', reason: escalated.policyReason ?? null } } : {}),
      role,
      expiry,
    });
    driver.stageApproval(row);
    driver.emit('approval_request', {
      approval_id: approvalId,
      reason,
      role,
      ...(expiry ? { expires_at: expiry.at } : {}),
      tool_calls: needing.map((c) => ({
        id: c.id,
        tool: c.toolName,
        args: c.args,
        risk: c.tool?.risk,
        ...(c.policyReason ? { reason: c.policyReason } : {}),
      })),
    });
    return { kind: 'wait', outcome: { type: 'need_approval', approvalId, reason, toolCalls: 0, risk } };
  }
  if (approval.status === 'pending') {
    const reason = approval.kind === 'policy' ? ('policy' as const) : ('approval' as const);
    return { kind: 'wait', outcome: { type: 'need_approval', approvalId, reason, toolCalls: 0, risk } };
  }
  // Bound to the calls it named, with the arguments approved (a person's edits included).
  const bound = new Set(JSON.parse(approval.tool_call_ids) as string[]);
  if (approval.args_hash !== approvalHash(calls.filter((c) => bound.has(c.id)))) {
    return {
      kind: 'error',
      outcome: {
        type: 'exec_error',
        failure: createFailure(
          'internal.error',
          `Approval '${approvalId}' does not match the calls of step ${stepIndex}`,
        ),
      },
    };
  }
  return { kind: 'go', rejected: approval.status !== 'approved' };
}

/**
 * Stages a question as an `input` wait bound to `call` (the model's `human.ask`, or a tool's
 * question mid-call, which names who asks in `from`), with its `input_request` event.
 */
export function stageQuestion(scope: CallScope, call: PreparedCall, id: string, request: QuestionRequest): void {
  const { live, runId, stepIndex } = scope;
  const role = askRoleOf(call.tool);
  const expiry = expiryOf(Date.now(), call.tool, live.waits);
  live.driver.stageApproval(pendingApproval(id, runId, stepIndex, 'input', [call], { request, role, expiry }));
  const { from } = request;
  live.driver.emit('input_request', {
    input_id: id,
    tool_call_id: call.id,
    question: request.question,
    choices: request.choices,
    schema: request.schema,
    ...(from
      ? {
          from: {
            tool: from.tool,
            ...(from.server !== undefined ? { server: from.server } : {}),
            in_flight: from.inFlight,
          },
        }
      : {}),
    role,
    ...(expiry ? { expires_at: expiry.at } : {}),
  });
}

/**
 * A `human.ask` call: the wait for its answer, opened once. Undefined once it is answered (the
 * decision settled the call with the answer) or refused.
 */
export function askWait(scope: CallScope, call: PreparedCall, executed: number): ExecutorOutcome | undefined {
  const { live } = scope;
  const { driver } = live;
  const approvalId = inputWaitId(call.id);
  const wait = driver.memory.approvals.get(approvalId);
  if (!wait) {
    const ask = call.parsed as HumanAskInput;
    stageQuestion(scope, call, approvalId, {
      kind: 'input',
      question: ask.question,
      choices: ask.choices ?? null,
      schema: ask.schema ?? null,
    });
    return { type: 'need_input', approvalId, toolCalls: executed };
  }
  if (wait.status === 'pending') return { type: 'need_input', approvalId, toolCalls: executed };
  if (!call.row || call.row.status === 'started' || call.row.status === 'unknown') {
    // Decided without its call settled (cannot happen: both commit in one unit): the model is told.
    scope.settle(
      call,
      'failed',
      toErrorResult(createFailure('tool.failed', `The question was ${wait.status} without an answer`)),
    );
  }
  return undefined;
}

/**
 * The row of the pause the machine entered (an operator's `pause`): who asked, why, where the run
 * goes on; staged with the transition, with the taking of the stored request, so all commit together.
 * It needs `submit` (the role that cancels) and never expires: only `resume` or a cancel ends it.
 */
export function openPauseWait(driver: RunDriver): void {
  const ctx = driver.context();
  const id = ctx.pendingApprovalId;
  if (!id || !ctx.pauseWait) return;
  const { reason, by, resume } = ctx.pauseWait;
  const request = { kind: 'pause', reason, by, resume, stepIndex: ctx.stepIndex };
  driver.stageApproval(pendingApproval(id, driver.runId, ctx.stepIndex, 'pause', [], { request, role: 'submit' }));
  driver.stage((writer) => writer.takePauseRequest(driver.runId));
  driver.emit('approval_request', {
    approval_id: id,
    reason: 'paused',
    step_index: ctx.stepIndex,
    pause: { reason, by, resume },
    role: 'submit',
    tool_calls: [],
  });
}

/**
 * The row of a budget wait the machine entered (`onBudgetWait`): which budget ran out, each limit
 * and its use, the step that would pass it; staged with the transition, so both commit together.
 */
export function openBudgetWait(driver: RunDriver, waits: WaitExpiryOptions | undefined): void {
  const ctx = driver.context();
  const id = ctx.pendingApprovalId;
  if (!id || !ctx.budgetWait) return;
  const { limits } = ctx;
  const request = {
    kind: 'budget',
    budget: ctx.budgetWait.budget,
    stepIndex: ctx.stepIndex,
    limits: [
      { budget: 'max_steps', limit: limits.maxSteps, used: ctx.stepIndex },
      { budget: 'max_llm_calls', limit: limits.maxLlmCalls, used: ctx.llmCalls },
      { budget: 'max_tool_calls', limit: limits.maxToolCalls, used: ctx.toolCalls },
      { budget: 'max_tokens', limit: limits.maxTokens, used: ctx.tokens },
      { budget: 'max_cost_usd', limit: limits.maxCostUsd, used: ctx.costUsd },
      { budget: 'timeout', limit: ctx.deadlineAt, used: Date.now() },
    ],
  };
  const expiry = expiryOf(Date.now(), waits);
  driver.stageApproval(pendingApproval(id, driver.runId, ctx.stepIndex, 'budget', [], { request, expiry }));
  driver.emit('approval_request', {
    approval_id: id,
    reason: 'budget',
    budget: ctx.budgetWait.budget,
    step_index: ctx.stepIndex,
    limits: request.limits,
    role: 'approve',
    ...(expiry ? { expires_at: expiry.at } : {}),
    tool_calls: [],
  });
}
