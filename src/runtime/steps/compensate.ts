/**
 * Compensation: what the executor does instead of a step once a cancel or a terminating
 * rejection asked to undo the run. Every completed, non-`read` call is looked at, newest first;
 * each one's compensation is journaled in the ledger like a tool call (its own row, id
 * `<call id>.undo`, `call_index` −1 − the call's, committed `started` before the compensator
 * runs) with `compensation` events, so a crash mid-way resumes it by the compensator's effect
 * class: `idempotent` runs again with the same key, `reconcilable` asks first. A call with no
 * compensator, or whose outcome is unknown, is left as it is and listed; a compensator that
 * fails is recorded and the run still ends.
 */
import type { CompensationReport, ExecutorOutcome } from '../../../machines/types.js';
import { DEFAULTS } from '../../defaults.js';
import { createFailure, toFailure, type Failure } from '../../failure.js';
import type { ToolCallRow, ToolCallStatus } from '../../store/index.js';
import { defineTool, type AnyTool, type ToolContext } from '../../tools/define-tool.js';
import { reconcileTool, runTool } from '../../tools/run-tool.js';
import type { ToolResult } from '../../tools/tool-result.js';
import { stepAgentOf, type LiveRun, type RuntimeEnv } from '../drive/env.js';
import { toSettledCall } from '../drive/settled-call.js';
import { compensationId } from '../model/ids.js';

type Outcome = { status: 'succeeded' } | { status: 'failed'; failure: Failure } | { status: 'aborted' };

/** Runs (or resumes) the compensation of a run; resolves with the machine's `compensated` event. */
export async function compensateRun(
  env: RuntimeEnv,
  live: LiveRun,
  runId: string,
  signal: AbortSignal,
): Promise<ExecutorOutcome> {
  const { driver } = live;
  const reason = driver.context().compensation?.reason ?? 'cancelled';
  // Calls the cancel cut off mid-way: their outcome is unknown, as at any run's end.
  driver.settleInterrupted(reason);
  // Children first: what they did came after the calls of this run that started them.
  await env.children.undoChildren(live, signal);
  if (signal.aborted) return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
  const calls = driver.memory
    .toolCalls()
    .filter((row) => row.call_index >= 0 && row.effect !== null && row.effect !== 'read')
    .filter((row) => row.status === 'succeeded' || row.status === 'unknown')
    // A fork undoes only its own effects: not its copies of its source's calls, nor a call that
    // ran with its source's idempotency key (the receiving system took it as the source's).
    .filter((row) => row.copied_from === null && row.idempotency_key === null)
    .sort((a, b) => b.step_index - a.step_index || b.call_index - a.call_index);
  const report: CompensationReport = { compensated: [], failed: [], notCompensated: [] };
  for (const call of calls) {
    const tool = stepAgentOf(env, live, call.step_index).tools.get(call.tool);
    const entry = { toolCallId: call.id, tool: call.tool };
    const why = call.status !== 'succeeded' ? 'outcome_unknown' : !tool?.compensate ? 'no_compensator' : null;
    if (why) {
      skip(live, call, why);
      report.notCompensated.push({ ...entry, reason: why });
      continue;
    }
    const outcome = await compensateCall(env, live, call, tool!, signal).catch(
      // A fault of Baton's own (a row it cannot read): recorded as this compensation's failure.
      (error: unknown): Outcome =>
        settle(live, call, tool!, compensationId(call.id), 'failed', errorOf(toFailure(error)), null),
    );
    if (outcome.status === 'aborted') return { type: 'exec_error', failure: createFailure('run.cancelled', 'Aborted') };
    if (outcome.status === 'succeeded') report.compensated.push(entry);
    else report.failed.push({ ...entry, failure: outcome.failure });
  }
  await driver.flush();
  return { type: 'compensated', report };
}

/** The ledger row of a call's compensation in a given status. */
function compensationRow(
  call: ToolCallRow,
  tool: AnyTool | undefined,
  previous: ToolCallRow | undefined,
  patch: Pick<ToolCallRow, 'status'> & Partial<ToolCallRow>,
): ToolCallRow {
  return {
    id: compensationId(call.id),
    run_id: call.run_id,
    step_index: call.step_index,
    call_index: -1 - call.call_index,
    tool: call.tool,
    tool_version: call.tool_version,
    effect: tool?.compensate ? (tool.compensateEffect ?? 'idempotent') : null,
    args: call.args,
    args_hash: call.args_hash,
    edited: null,
    copied_from: null,
    idempotency_key: null,
    child_run_id: null,
    handle: null,
    result: null,
    attempts: previous?.attempts ?? 0,
    started_at: previous?.started_at ?? null,
    finished_at: null,
    deadline_at: previous?.deadline_at ?? null,
    ...patch,
  };
}

/** Records, once, that a call is left as it is. */
function skip(live: LiveRun, call: ToolCallRow, why: 'no_compensator' | 'outcome_unknown'): void {
  const { driver } = live;
  const id = compensationId(call.id);
  if (driver.memory.ledger.has(id)) return;
  const message =
    why === 'no_compensator'
      ? `Tool '${call.tool}' has no compensator: call ${call.id} stays done`
      : `The outcome of call ${call.id} is unknown: it is not compensated, a human must check it`;
  driver.stageToolCall(
    compensationRow(call, undefined, undefined, {
      status: 'skipped',
      result: JSON.stringify({ status: 'error', content: message, durationMs: 0, truncated: false, retryable: false }),
      finished_at: Date.now(),
    }),
  );
  driver.emit('compensation', {
    tool_call_id: id,
    compensates: call.id,
    tool: call.tool,
    status: 'skipped',
    reason: why,
  });
}

/**
 * The output a call recorded, whole (from its artifact when the ledger kept a preview); null
 * for a call a human recorded as done (it has none: `ctx.compensates` names the call).
 */
async function outputOf(env: RuntimeEnv, call: ToolCallRow): Promise<unknown> {
  const result = call.result ? (JSON.parse(call.result) as ToolResult) : null;
  if (result?.recordedBy) return null;
  if (!result?.truncated || !result.artifact) return result?.content ?? null;
  const blob = await env.store.getArtifact(result.artifact.sha256);
  if (!blob) return result.content;
  const text = Buffer.from(blob.content).toString('utf8');
  if (blob.media_type !== 'application/json') return text;
  return JSON.parse(text) as unknown;
}

/** Compensates one call through the ledger, resuming an interrupted attempt by the compensator's effect class. */
async function compensateCall(
  env: RuntimeEnv,
  live: LiveRun,
  call: ToolCallRow,
  tool: AnyTool,
  signal: AbortSignal,
): Promise<Outcome> {
  const { driver } = live;
  const id = compensationId(call.id);
  const settledBefore = driver.memory.ledger.get(id);
  if (settledBefore?.status === 'succeeded') return { status: 'succeeded' };
  if (settledBefore?.status === 'failed') return { status: 'failed', failure: failureOf(settledBefore) };
  // Given up on earlier (its outcome stayed unknown): listed, not tried again.
  if (
    settledBefore?.status === 'unknown' &&
    settledBefore.finished_at !== null &&
    settledBefore.attempts >= DEFAULTS.maxToolAttempts
  ) {
    return { status: 'failed', failure: failureOf(settledBefore) };
  }
  const args = JSON.parse(call.args) as unknown;
  const parsed = tool.input.safeParse(args);
  const input = parsed.success ? parsed.data : args;
  const output = await outputOf(env, call);
  // The compensator as a tool of its own: its effect class, no output schema, the tool's limits.
  const undo = defineTool<unknown, unknown>({
    name: tool.name,
    description: `compensation of ${tool.name}`,
    input: tool.input,
    effect: tool.compensateEffect ?? 'idempotent',
    risk: 'low',
    timeoutMs: tool.timeoutMs,
    maxOutputBytes: Number.MAX_SAFE_INTEGER,
    execute: (i, ctx) => tool.compensate!(i, output, ctx),
    ...(tool.reconcileCompensation ? { reconcile: (i, ctx) => tool.reconcileCompensation!(i, output, ctx) } : {}),
  });
  for (;;) {
    const previous = driver.memory.ledger.get(id);
    const attempts = previous?.attempts ?? 0;
    const ctx: ToolContext = {
      runId: call.run_id,
      toolCallId: id,
      idempotencyKey: id,
      signal,
      context: live.context,
      attempt: attempts + 1,
      compensates: call.id,
    };
    const unresolved = previous?.status === 'started' || previous?.status === 'unknown';
    if (unresolved && undo.effect === 'reconcilable') {
      const found = await reconcileTool(undo, input, ctx).catch(() => ({ done: false as const }));
      if (signal.aborted) return { status: 'aborted' };
      if (found.done) return settle(live, call, tool, id, 'succeeded', ok(found.output, 0), 'reconciled');
    }
    if (unresolved && attempts >= DEFAULTS.maxToolAttempts) {
      const failure = createFailure(
        'tool.outcome_unknown',
        `The compensation of call ${call.id} (${call.tool}) was interrupted ${attempts} times; its outcome is unknown`,
        { details: { tool_call_id: call.id } },
      );
      return settle(live, call, tool, id, 'unknown', errorOf(failure), null);
    }
    const deadlineAt = Date.now() + tool.timeoutMs;
    driver.stageToolCall(
      compensationRow(call, tool, previous, {
        status: 'started',
        attempts: attempts + 1,
        started_at: Date.now(),
        deadline_at: deadlineAt,
      }),
    );
    driver.emit('compensation', {
      tool_call_id: id,
      compensates: call.id,
      tool: call.tool,
      status: 'started',
      effect: undo.effect,
      attempt: attempts + 1,
      ...(unresolved ? { recovery: undo.effect === 'reconcilable' ? 'reconciled_not_done' : 'rerun' } : {}),
    });
    // Durable before the compensator acts: a crash from here on is found `started` on resume.
    await driver.flush();
    if (signal.aborted) return { status: 'aborted' };
    const run = await runTool(undo, input, ctx, deadlineAt);
    if (signal.aborted) return { status: 'aborted' };
    if (run.unknown) {
      // Timed out or threw: safe to try again (idempotent or reconcilable), up to the attempts.
      driver.stageToolCall(
        compensationRow(call, tool, driver.memory.ledger.get(id), {
          status: 'unknown',
          result: JSON.stringify(run.result),
          finished_at: Date.now(),
        }),
      );
      continue;
    }
    const status: ToolCallStatus = run.result.status === 'ok' ? 'succeeded' : 'failed';
    return settle(live, call, tool, id, status, run.result, null);
  }
}

function ok(content: unknown, durationMs: number): ToolResult {
  return { status: 'ok', content: content ?? null, durationMs, truncated: false, retryable: false };
}

function errorOf(failure: Failure): ToolResult {
  return { status: 'error', content: failure.message, durationMs: 0, truncated: false, retryable: false, failure };
}

function failureOf(row: ToolCallRow): Failure {
  const result = row.result ? (JSON.parse(row.result) as ToolResult) : null;
  return result?.failure ?? createFailure('tool.failed', `The compensation of ${row.tool} failed`);
}

/** Settles a compensation: its row, its event, its outcome for the report. */
function settle(
  live: LiveRun,
  call: ToolCallRow,
  tool: AnyTool,
  id: string,
  status: ToolCallStatus,
  result: ToolResult,
  recovery: 'reconciled' | null,
): Outcome {
  const { driver } = live;
  const row = compensationRow(call, tool, driver.memory.ledger.get(id), { status });
  const settled = toSettledCall(row, { status, result }, recovery ? { recovery } : undefined);
  driver.stageToolCall(settled.row);
  driver.emit(settled.type, settled.data);
  if (status === 'succeeded') return { status: 'succeeded' };
  return {
    status: 'failed',
    failure: result.failure ?? createFailure('tool.failed', `The compensation of ${call.tool} failed`),
  };
}
