/**
 * The `executor` actor: the tool calls of one step, through the ledger (docs/architecture.md §4).
 * validate → policy → (approval) → `started` committed → execute → result staged.
 * A re-invoked executor replays settled calls for free; each call runs (or is resolved, when
 * its outcome is unknown) in `execute-call.ts`.
 */
import { checkToolVersion } from './tool-version.js';
import { fromPromise } from 'xstate';
import type { ExecutorActorInput, ExecutorOutcome } from '../../../machines/types.js';
import { createFailure } from '../../failure.js';
import { missingStepAgent, type RuntimeEnv } from '../drive/env.js';
import { toErrorResult, type ToolResult } from '../../tools/tool-result.js';
import { executeCall, type CallScope } from './execute-call.js';
import { failpoint } from '../model/failpoints.js';
import { hashOf } from '../model/ids.js';
import { askWait, stepWait } from './human-waits.js';
import { loadDecision } from '../drive/run-memory.js';
import { highestRisk, settleCall } from '../ledger/ledger.js';
import { FAILED_TOOL_CALL_STATUSES, SETTLED_TOOL_CALL_STATUSES, type ToolCallStatus } from '../../store/index.js';
import { prepareCalls, type PreparedCall } from '../ledger/prepared-call.js';
import { compensateRun } from './compensate.js';
import { checkRepeat } from './repeat-effect.js';
import { callChild } from './child-call.js';
import { callHandoff, stackAfterStep } from './handoffs.js';
import { callMemory } from './memory-calls.js';
import { memoryAccessOf } from '../../tools/memory-tools.js';

/** Creates the executor actor logic for a runtime. */
export function createExecutorActor(env: RuntimeEnv) {
  return fromPromise<ExecutorOutcome, ExecutorActorInput>(async ({ input, signal }) => {
    // Let subscribers see the transition into `executing` before this step writes events.
    await Promise.resolve();
    const { runId, stepIndex, limits } = input;
    await env.hooks?.beforeActor?.({ actor: 'executor', runId, stepIndex, signal });
    const live = env.live(runId);
    const { driver } = live;
    // Stopped while it waited to begin (a cancel): it stages nothing.
    if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
    if (input.compensating) return compensateRun(env, live, runId, signal);
    const decision = loadDecision(env.live(runId).driver.memory, stepIndex);
    if (!decision) {
      return {
        type: 'exec_error',
        failure: createFailure('internal.error', `Step ${stepIndex} has no journaled decision`),
      };
    }
    if (decision.type === 'final') {
      // The model never decides a terminal state: the runtime checks the ledger first.
      const open = driver.memory.toolCalls().filter((r) => !SETTLED_TOOL_CALL_STATUSES.has(r.status));
      const pending = [...driver.memory.approvals.values()].filter((a) => a.status === 'pending');
      if (open.length > 0 || pending.length > 0) {
        return {
          type: 'exec_error',
          failure: createFailure('internal.error', `Run '${runId}' cannot finish with open tool calls or approvals`),
        };
      }
      return { type: 'done' };
    }

    // Calls run with the tools of the agent that planned them: never another agent's of the same name.
    const missing = missingStepAgent(env, live, stepIndex);
    if (missing) {
      const message = `Step ${stepIndex} of run '${runId}' was planned by agent '${missing}', which this runtime does not have`;
      return {
        type: 'exec_error',
        failure: createFailure('run.agent_mismatch', message, { details: { agent: missing } }),
      };
    }
    failpoint('step.validating');
    const calls = prepareCalls(env, live, runId, stepIndex);
    const settle = (
      call: PreparedCall,
      status: ToolCallStatus,
      result: ToolResult,
      extra: Record<string, unknown> = {},
    ) => {
      settleCall(driver, stepIndex, call, status, result, { mode: 'stage', extra });
    };
    const scope: CallScope = { env, live, runId, stepIndex, signal, settle };

    const step = stepWait(scope, calls);
    if (step.kind !== 'go') return step.outcome;
    const rejected = step.rejected;

    let executed = 0;
    for (const call of calls) {
      if (call.row && SETTLED_TOOL_CALL_STATUSES.has(call.row.status)) continue;
      if (call.verdict === 'invalid' || call.verdict === 'not_found' || call.verdict === 'denied') {
        settle(call, call.verdict, toErrorResult(call.failure!));
        continue;
      }
      if (call.verdict === 'ask') {
        const wait = askWait(scope, call, executed);
        if (wait) return wait;
        continue;
      }
      if (call.verdict === 'approval' && rejected) {
        settle(
          call,
          'rejected',
          toErrorResult(createFailure('policy.denied', `A reviewer rejected tool '${call.toolName}'`)),
        );
        continue;
      }
      if (call.tool?.handoff) {
        // A handoff runs nothing: it settles now, and the step's end moves the handoff stack.
        callHandoff(scope, call, calls, input.handoffStack ?? []);
        continue;
      }
      const version = checkToolVersion(scope, call, driver.memory.journal.get(stepIndex)?.toolVersions ?? null);
      // A wait on this one call: the calls before it in the step count as run.
      const waitOn = (
        approvalId: string,
        reason: 'tool_version_mismatch' | 'uncertain_side_effect' | 'repeat_effect',
      ) => ({ type: 'need_approval', approvalId, reason, toolCalls: executed, risk: highestRisk([call]) }) as const;
      if (version.kind === 'wait') return waitOn(version.approvalId, 'tool_version_mismatch');
      // A fork's call that would repeat its source's effect (only forks: no await for other runs).
      if (live.fork && !call.tool?.delegate) {
        const repeat = await checkRepeat(scope, call);
        if (repeat.kind === 'wait') return waitOn(repeat.approvalId, 'repeat_effect');
        if (repeat.repeatOf) call.repeatOf = repeat.repeatOf;
        if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
      }
      if (limits.maxToolCalls !== null && input.toolCalls + executed >= limits.maxToolCalls) {
        return { type: 'budget_exceeded', budget: 'max_tool_calls', toolCalls: executed };
      }
      if (memoryAccessOf(call.tool)) {
        // Read or written by the runtime, in this step's unit (`memory-calls.ts`).
        await callMemory(scope, call, calls);
        executed += 1;
        continue;
      }
      if (call.tool?.delegate) {
        // An agent called as a tool: its child run does the work, the run waits for its end.
        const child = await callChild(scope, call, { before: input.toolCalls, executed });
        if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
        if (child) return child;
        continue;
      }
      const ran = await executeCall(scope, call);
      if (ran.kind === 'aborted') return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
      if (ran.kind === 'wait') return waitOn(ran.approvalId, 'uncertain_side_effect');
      if (ran.kind === 'input') {
        return { type: 'need_input', approvalId: ran.approvalId, toolCalls: executed + (ran.ran ? 1 : 0) };
      }
      if (ran.kind === 'task') {
        // Its work goes on elsewhere: the run waits for it holding nothing (`task-call.ts`).
        return {
          type: 'need_approval',
          approvalId: ran.approvalId,
          reason: 'task',
          toolCalls: executed + (ran.ran ? 1 : 0),
          risk: highestRisk([call]),
        };
      }
      if (ran.ran) executed += 1;
      if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
    }

    const failedAll = calls.length > 0 && calls.every((c) => c.row && FAILED_TOOL_CALL_STATUSES.has(c.row.status));
    const loopSignature = failedAll ? hashOf(calls.map((c) => [c.toolName, c.argsHash, c.row!.status])) : null;
    const handoffStack = stackAfterStep(scope, calls, input.handoffStack ?? []);
    return { type: 'next_step', toolCalls: executed, loopSignature, ...(handoffStack ? { handoffStack } : {}) };
  });
}
