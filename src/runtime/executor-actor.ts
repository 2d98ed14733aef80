/**
 * The `executor` actor: the tool calls of one step, through the ledger (DESIGN §3–4).
 * validate → policy → (approval) → `started` committed → execute → result staged.
 * A re-invoked executor replays settled calls for free and resolves an interrupted one by
 * its tool's effect class; an interrupted `unsafe` call is never retried without a human.
 */
import { fromPromise } from 'xstate';
import type { ExecutorActorInput, ExecutorOutcome } from '../../machines/types.js';
import { createFailure, type Failure } from '../failure.js';
import { decide } from '../policy/index.js';
import type { ToolCallRow } from '../store/index.js';
import type { AnyTool } from '../tools/define-tool.js';
import { normalizeOutput, reconcileTool, runTool, type ToolRun } from '../tools/run-tool.js';
import { toErrorResult, type ToolResult } from '../tools/tool-result.js';
import type { LiveRun, RuntimeEnv } from './env.js';
import { failpoint } from './failpoints.js';
import { hashOf, stepApprovalId, toolCallId, uncertainApprovalId } from './ids.js';
import { loadDecision } from './planner-actor.js';
import { FAILED_STATUSES, SETTLED_STATUSES } from './transcript.js';

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
  row: ToolCallRow | undefined;
}

/** Validates and applies policy to each call of a step. */
export function prepareCalls(env: RuntimeEnv, live: LiveRun, runId: string, stepIndex: number): PreparedCall[] {
  const decision = loadDecision(env, runId, stepIndex);
  if (!decision || decision.type !== 'tool_calls') return [];
  const untrusted = [...live.driver.memory.ledger.values()].some(
    (row) => row.step_index < stepIndex && row.status === 'succeeded',
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

/** The hash an approval binds to: the exact call ids and their argument hashes. */
export function approvalHash(calls: PreparedCall[]): string {
  return hashOf(calls.map((c) => [c.id, c.argsHash]));
}

/** Creates the executor actor logic for a runtime. */
export function createExecutorActor(env: RuntimeEnv) {
  return fromPromise<ExecutorOutcome, ExecutorActorInput>(async ({ input, signal }) => {
    // Let subscribers see the transition into `executing` before this step writes events.
    await Promise.resolve();
    const { runId, stepIndex, limits } = input;
    await env.hooks?.beforeActor?.({ actor: 'executor', runId, stepIndex, signal });
    const live = env.live(runId);
    const { driver } = live;
    const store = env.store;
    const decision = loadDecision(env, runId, stepIndex);
    if (!decision) {
      return {
        type: 'exec_error',
        failure: createFailure('internal.error', `Step ${stepIndex} has no journaled decision`),
      };
    }
    if (decision.type === 'final') {
      // The model never decides a terminal state: the runtime checks the ledger first.
      const open = driver.memory.toolCalls().filter((r) => !SETTLED_STATUSES.has(r.status));
      const pending = store.listApprovals(runId).filter((a) => a.status === 'pending');
      if (open.length > 0 || pending.length > 0) {
        return {
          type: 'exec_error',
          failure: createFailure('internal.error', `Run '${runId}' cannot finish with open tool calls or approvals`),
        };
      }
      return { type: 'done' };
    }

    failpoint('step.validating');
    const calls = prepareCalls(env, live, runId, stepIndex);
    const settle = (call: PreparedCall, status: string, result: ToolResult, extra: Record<string, unknown> = {}) => {
      const row = callRow(runId, stepIndex, call, { status, result: JSON.stringify(result), finished_at: Date.now() });
      call.row = row;
      driver.stageToolCall(row);
      driver.emit('result', { ...resultEventData(call, status, result), ...extra });
    };

    // Approval first, for the whole step: nothing in it runs before a human has answered.
    // The approval binds every call of the step that needs one, settled or not, so a step
    // resumed after some of its approved calls ran still matches what the human approved.
    const needing = calls.filter((c) => c.verdict === 'approval');
    let rejected = false;
    if (needing.length > 0) {
      const approvalId = stepApprovalId(runId, stepIndex);
      const approval = store.getApproval(approvalId);
      const hash = approvalHash(needing);
      if (!approval) {
        failpoint('approval.requesting');
        const now = Date.now();
        driver.stage(() =>
          store.insertApproval({
            id: approvalId,
            run_id: runId,
            step_index: stepIndex,
            kind: 'tool',
            tool_call_ids: JSON.stringify(needing.map((c) => c.id)),
            args_hash: hash,
            status: 'pending',
            resolution: null,
            decided_by: null,
            reason: null,
            created_at: now,
            decided_at: null,
          }),
        );
        driver.emit('approval_request', {
          approval_id: approvalId,
          reason: 'approval',
          tool_calls: needing.map((c) => ({ id: c.id, tool: c.toolName, args: c.args, risk: c.tool?.risk })),
        });
        return { type: 'need_approval', approvalId, reason: 'approval', toolCalls: 0 };
      }
      if (approval.status === 'pending') return { type: 'need_approval', approvalId, reason: 'approval', toolCalls: 0 };
      if (approval.args_hash !== hash) {
        return {
          type: 'exec_error',
          failure: createFailure(
            'internal.error',
            `Approval '${approvalId}' does not match the calls of step ${stepIndex}`,
          ),
        };
      }
      rejected = approval.status === 'rejected';
    }

    let executed = 0;
    for (const call of calls) {
      if (call.row && SETTLED_STATUSES.has(call.row.status)) continue;
      if (call.verdict === 'invalid' || call.verdict === 'not_found' || call.verdict === 'denied') {
        settle(call, call.verdict, toErrorResult(call.failure!));
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
      if (limits.maxToolCalls !== null && input.toolCalls + executed >= limits.maxToolCalls) {
        return { type: 'budget_exceeded', budget: 'max_tool_calls' };
      }
      const tool = call.tool!;
      const interrupted = call.row?.status === 'started' || call.row?.status === 'unknown';
      const attempts = call.row?.attempts ?? 0;
      // How an interrupted call (its process died mid-call) was resolved goes into its events,
      // so "did it run twice?" can be answered from the log alone.
      let recovery: Recovery | null = interrupted ? (call.row?.status === 'unknown' ? 'human_retry' : 'rerun') : null;
      const ctx = {
        runId,
        toolCallId: call.id,
        idempotencyKey: call.id,
        signal,
        context: live.context,
        attempt: attempts + 1,
      };
      if (interrupted && tool.effect === 'reconcilable') {
        const found = await reconcileTool(tool, call.parsed, ctx);
        if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
        if (found.done) {
          const outcome = normalizeOutput(tool, found.output, 0);
          storeArtifact(env, live, outcome);
          settle(call, outcome.result.status === 'ok' ? 'succeeded' : 'failed', outcome.result, {
            recovery: 'reconciled',
          });
          executed += 1;
          continue;
        }
        recovery = 'reconciled_not_done';
      }
      if (interrupted && tool.effect === 'unsafe') {
        const approvalId = uncertainApprovalId(call.id, attempts);
        const approval = store.getApproval(approvalId);
        if (!approval) {
          const now = Date.now();
          const row = callRow(runId, stepIndex, call, { status: 'unknown' });
          call.row = row;
          driver.stageToolCall(row);
          driver.stage(() => {
            store.insertApproval({
              id: approvalId,
              run_id: runId,
              step_index: stepIndex,
              kind: 'uncertain',
              tool_call_ids: JSON.stringify([call.id]),
              args_hash: approvalHash([call]),
              status: 'pending',
              resolution: null,
              decided_by: null,
              reason: null,
              created_at: now,
              decided_at: null,
            });
          });
          driver.emit('approval_request', {
            approval_id: approvalId,
            reason: 'uncertain_side_effect',
            tool_calls: [{ id: call.id, tool: call.toolName, args: call.args, risk: tool.risk, attempts }],
            recovery: 'to_human' satisfies Recovery,
          });
          return { type: 'need_approval', approvalId, reason: 'uncertain_side_effect', toolCalls: executed };
        }
        if (approval.status === 'pending') {
          return { type: 'need_approval', approvalId, reason: 'uncertain_side_effect', toolCalls: executed };
        }
        // Approved with `retry`: fall through and run it again, as a human decided.
        // (`done` and rejections were settled in the ledger when the human decided.)
      }

      const started = callRow(runId, stepIndex, call, {
        status: 'started',
        attempts: attempts + 1,
        started_at: Date.now(),
      });
      call.row = started;
      driver.stageToolCall(started);
      driver.emit('action', {
        tool_call_id: call.id,
        tool: call.toolName,
        args: call.args,
        effect: tool.effect,
        attempt: attempts + 1,
        ...(recovery ? { recovery } : {}),
      });
      // The `started` row is durable before a side effect: a crash from here on is detectable.
      // A `read` call has no effect to protect; its row commits with the next transition.
      if (tool.effect !== 'read') await driver.flush();
      failpoint('tool.started');
      if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
      const outcome = await runTool(tool, call.parsed, ctx);
      // Whatever happens next (an abort, a bug), the ledger keeps what the call did: the
      // outcome is staged at once and commits with the next transition, even a failing one.
      storeArtifact(env, live, outcome);
      settle(call, outcome.result.status === 'ok' ? 'succeeded' : 'failed', outcome.result);
      executed += 1;
      failpoint('tool.returned');
      if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
    }

    const failedAll = calls.length > 0 && calls.every((c) => c.row && FAILED_STATUSES.has(c.row.status));
    const loopSignature = failedAll ? hashOf(calls.map((c) => [c.toolName, c.argsHash, c.row!.status])) : null;
    return { type: 'next_step', toolCalls: executed, loopSignature };
  });
}

/** Stages a large output as an artifact, stored once by content hash. */
function storeArtifact(env: RuntimeEnv, live: LiveRun, outcome: ToolRun): void {
  const blob = outcome.artifact;
  if (!blob) return;
  live.driver.stage(() =>
    env.store.putArtifact({
      sha256: blob.sha256,
      size: blob.size,
      media_type: blob.mediaType,
      content: blob.content,
      created_at: Date.now(),
    }),
  );
  live.driver.emit('artifact', { sha256: blob.sha256, size: blob.size, media_type: blob.mediaType });
}
