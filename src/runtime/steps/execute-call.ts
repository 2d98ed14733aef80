/**
 * One tool call of a step, through the ledger, until its outcome is known or a human must
 * decide (docs/architecture.md §4). A call's outcome is unknown after its process stopped mid-call (a `started`
 * row found on resume), a timeout, an abort, or a throw other than the tool's own
 * `ToolFailedError` / `ToolUnavailableError`. An unknown outcome is resolved by the tool's effect
 * class, the same way whatever the cause: `read` is reported to the model (or, interrupted, run
 * again); `idempotent` runs again with the same idempotency key; `reconcilable` asks
 * `reconcile()` first; `unsafe`, and any call that used up its attempts, waits for a human. The
 * model is never told to retry a call whose effect may have happened.
 */
import { DEFAULTS } from '../../defaults.js';
import { createFailure, toFailure, type Failure } from '../../failure.js';
import type { ToolResult } from '../../tools/tool-result.js';
import { ToolDetached, type ToolProgress } from '../../tools/define-tool.js';
import { normalizeOutput, reconcileTool, runTool, type ArtifactBlob, type ToolRun } from '../../tools/run-tool.js';
import { toSettledCall } from '../drive/settled-call.js';
import { callRow, pendingApproval, type Recovery } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { toProgressData } from '../model/event-data.js';
import { failpoint } from '../model/failpoints.js';
import { uncertainApprovalId } from '../model/ids.js';
import { detach, pendingTaskWait } from './task-call.js';
import type { CallScope, UnknownOutcome } from './call-scope.js';
import { closeInFlightQuestions, inFlightAsker } from './in-flight-questions.js';
import { stopForQuestion } from './tool-questions.js';
import { answeredInput, lastStoppedQuestion } from '../ledger/question-rows.js';
import { toErrorResult } from '../../tools/tool-result.js';
import { pause, type LimitGate, type Passed } from '../drive/limiter.js';
import { passGates, throttledData, toolGates } from './call-limits.js';

export type { CallScope, UnknownOutcome } from './call-scope.js';

/** Where a call ended up: settled (it ran, or was found done), waiting for a human, or stopped by an abort. */
export type CallStep =
  | { kind: 'settled'; ran: boolean }
  | { kind: 'wait'; approvalId: string }
  /** The call stopped to ask a person (`ToolInputRequired`): the run waits for the answer. */
  | { kind: 'input'; approvalId: string; ran: boolean }
  /** The call's work goes on elsewhere (`ctx.detach`): the run waits for it to end. */
  | { kind: 'task'; approvalId: string; ran: boolean }
  | { kind: 'aborted' };

/** Runs (or resolves) one call that is allowed to run. */
export async function executeCall(scope: CallScope, call: PreparedCall): Promise<CallStep> {
  const { driver } = scope.live;
  const cause: UnknownOutcome | null = call.row?.status === 'started' ? 'interrupted' : null;
  // A call that stopped to ask runs again once answered, with the answer; until then it waits.
  const asked = lastStoppedQuestion(driver.memory.approvals, call.id);
  if (call.row?.status === 'waiting' && asked?.status === 'pending') {
    return { kind: 'input', approvalId: asked.id, ran: false };
  }
  // A call whose work goes on elsewhere waits for it until a poll finds it ended.
  const taskWait = pendingTaskWait(driver.memory.approvals, call);
  if (taskWait) return { kind: 'task', approvalId: taskWait, ran: false };
  const input = answeredInput(asked);
  closeInFlightQuestions(scope, call, cause);
  /** The last status the call told (`ctx.progress`): a task wait tells only a new one. */
  let told: string | null = null;
  /** The limits the call passed (`call-limits.ts`): held until its outcome is known. */
  const limits: CallLimits = { gates: null, passed: null };
  try {
    return await attemptCall(scope, call, { cause, input, limits, told: () => told, tell: (t) => (told = t) });
  } finally {
    await limits.passed?.release();
  }
}

/** What the attempts of one call share. */
interface Attempts {
  cause: UnknownOutcome | null;
  input: ReturnType<typeof answeredInput>;
  limits: CallLimits;
  told(): string | null;
  tell(status: string): void;
}

/** The gates of a call with limits, once computed, and what it holds of them. */
interface CallLimits {
  gates: LimitGate[] | null;
  passed: Passed | null;
}

/** Attempts a call until its outcome is known, a person must decide, or the run leaves the step. */
async function attemptCall(scope: CallScope, call: PreparedCall, shared: Attempts): Promise<CallStep> {
  const { live, runId, stepIndex, signal } = scope;
  const { driver } = live;
  const tool = call.tool!;
  let { cause } = shared;
  const { input, limits } = shared;
  for (;;) {
    const status = call.row?.status;
    const unresolved = status === 'started' || status === 'unknown';
    const attempts = call.row?.attempts ?? 0;
    // Work the call started elsewhere, saved before it waited: followed again, never started again.
    const handle = call.row?.handle ? (JSON.parse(call.row.handle) as unknown) : null;
    const ctx = {
      runId,
      toolCallId: call.id,
      idempotencyKey: call.row?.idempotency_key ?? call.idempotencyKey ?? call.id,
      signal,
      context: live.context,
      attempt: attempts + 1,
      ...(input ? { input } : {}),
      handle,
      saveHandle: (saved: unknown) => saveHandle(scope, call, saved),
      progress: (update: ToolProgress) => {
        if (typeof update.message === 'string') shared.tell(update.message);
        return reportProgress(scope, call, update);
      },
      // The run can wait for the call's work holding nothing only if it can poll that work.
      ...(tool.pollHandle
        ? {
            detach: (options?: { pollAfterMs?: number }): never => {
              throw new ToolDetached(options);
            },
          }
        : {}),
    };
    // How an unresolved call was resolved goes into its events, so "did it run twice?" can be
    // answered from the log alone.
    const follows = handle !== null && attempts < DEFAULTS.maxHandleAttempts;
    let recovery: Recovery | null = unresolved ? (follows ? 'followed' : 'rerun') : null;
    if (unresolved && tool.effect !== 'read' && !follows) {
      const approvalId = uncertainApprovalId(call.id, attempts);
      const approval = driver.memory.approvals.get(approvalId);
      // Approved with `retry`, a human's choice; `done` and rejections were settled when decided.
      if (approval?.status === 'approved') {
        recovery = 'human_retry';
      } else {
        if (tool.effect === 'reconcilable' && !approval) {
          const found = await reconcileTool(tool, call.parsed, ctx).catch((error: unknown) => ({
            error: toFailure(error, 'tool.failed'),
          }));
          if (signal.aborted) return { kind: 'aborted' };
          if ('error' in found) {
            // reconcile() could not tell whether the effect happened (it threw, or timed out):
            // running the call again might do it twice, so a human decides, told why.
            askHuman(scope, call, approvalId, attempts, cause, found.error);
            return { kind: 'wait', approvalId };
          }
          if (found.done) {
            const outcome = normalizeOutput(tool, found.output, 0);
            storeArtifact(scope, outcome);
            const settled = outcome.result.status === 'ok' ? 'succeeded' : 'failed';
            scope.settle(call, settled, outcome.result, { recovery: 'reconciled', cause });
            return { kind: 'settled', ran: true };
          }
          recovery = 'reconciled_not_done';
        }
        if (tool.effect === 'unsafe' || attempts >= DEFAULTS.maxToolAttempts) {
          if (!approval) askHuman(scope, call, approvalId, attempts, cause);
          return { kind: 'wait', approvalId };
        }
      }
    }

    // The run left this step (a cancel came in while this actor awaited): nothing more is staged,
    // or a `started` row would land with the run's last commit and stay open in a finished run.
    if (signal.aborted) return { kind: 'aborted' };
    // Over a per-key limit, the call waits here, before its `started` row: it never runs twice for it.
    const gated = await passLimits(scope, call, limits);
    if (gated) return gated;
    const deadlineAt = Date.now() + tool.timeoutMs;
    const started = callRow(runId, stepIndex, call, {
      status: 'started',
      attempts: attempts + 1,
      started_at: Date.now(),
      deadline_at: deadlineAt,
    });
    call.row = started;
    driver.stageToolCall(started);
    driver.emit('action', {
      tool_call_id: call.id,
      tool: call.toolName,
      args: call.args,
      effect: tool.effect,
      risk: tool.risk,
      // An MCP tool's server, annotations and overrides: how this call came to run as it does.
      ...(tool.origin ? { origin: tool.origin, trusted_output: tool.trustedOutput } : {}),
      attempt: attempts + 1,
      deadline_at: deadlineAt,
      ...(recovery ? { recovery, cause } : {}),
      // A fork's call that repeats its source's: which call, and the key it runs with.
      ...(call.repeatOf ? { repeat_of: call.repeatOf } : {}),
      ...(started.idempotency_key ? { idempotency_key: started.idempotency_key } : {}),
      // Following work an earlier attempt started (its handle), not starting it again.
      ...(unresolved && handle !== null ? { handle } : {}),
    });
    // The `started` row is durable before a side effect: a crash from here on is detectable.
    // A `read` call has no effect to protect; its row commits with the next transition.
    if (tool.effect !== 'read') await driver.flush();
    failpoint('tool.started');
    if (signal.aborted) return { kind: 'aborted' };
    const asker = inFlightAsker(scope, call, attempts + 1);
    const outcome = await runTool(tool, call.parsed, { ...ctx, ask: asker.ask }, deadlineAt, (retryAfterMs) =>
      rateLimited(scope, call, limits, deadlineAt, retryAfterMs),
    );
    if (limits.gates && outcome.result.status === 'ok') scope.env.limiter.cleared(limits.gates);
    // Questions still open when the call is over reach no one now: closed with its outcome.
    if (!signal.aborted) await asker.end();
    // Aborted means the run ended (or the runtime closed) mid-call: whoever ended it settles
    // the row (see the run driver), or the next runtime resolves it as interrupted.
    if (signal.aborted) return { kind: 'aborted' };
    if (outcome.inputRequired) {
      const { question, state } = outcome.inputRequired;
      const approvalId = stopForQuestion(scope, call, question, state);
      return approvalId === null ? { kind: 'settled', ran: true } : { kind: 'input', approvalId, ran: true };
    }
    // Let go of once its work's handle is durable: the run waits for that work.
    const detached = outcome.detached ? detach(scope, call, outcome, shared.told()) : null;
    if (detached) return { kind: 'task', approvalId: detached, ran: true };
    storeArtifact(scope, outcome);
    if (outcome.unknown && tool.effect !== 'read') {
      const row = callRow(runId, stepIndex, call, { status: 'unknown' });
      const ended = toSettledCall(row, { status: 'unknown', result: outcome.result }, { cause: outcome.unknown });
      call.row = ended.row;
      driver.stageToolCall(ended.row);
      driver.emit(ended.type, ended.data);
      cause = outcome.unknown;
      continue;
    }
    scope.settle(call, outcome.result.status === 'ok' ? 'succeeded' : 'failed', outcome.result);
    failpoint('tool.returned');
    return { kind: 'settled', ran: true };
  }
}

/**
 * Passes the call's limits once (a key function that throws fails the call: the model is told);
 * the step the call ends at when it cannot go on, else null.
 */
async function passLimits(scope: CallScope, call: PreparedCall, limits: CallLimits): Promise<CallStep | null> {
  if (limits.passed) return null;
  if (limits.gates === null) {
    try {
      limits.gates = toolGates(call.tool!, call.parsed, { runId: scope.runId, context: scope.live.context });
    } catch (error) {
      const failure = createFailure(
        'tool.failed',
        `The limit key of tool '${call.toolName}' failed: ${toFailure(error).message}`,
      );
      scope.settle(call, 'failed', toErrorResult(failure));
      return { kind: 'settled', ran: false };
    }
  }
  if (limits.gates.length === 0) return null;
  const who = { tool_call_id: call.id, tool: call.toolName };
  limits.passed = await passGates(scope.env, scope.live, limits.gates, call.id, scope.signal, who);
  return limits.passed ? null : { kind: 'aborted' };
}

/**
 * A 429 from the call's service (`ToolRateLimitedError`): its keys back off for every runtime,
 * and the call, unless it is `unsafe`, waits that long (told as `throttled`) and tries again if
 * its deadline allows; true to try again.
 */
async function rateLimited(
  scope: CallScope,
  call: PreparedCall,
  limits: CallLimits,
  deadlineAt: number,
  retryAfterMs: number | undefined,
): Promise<boolean> {
  if (scope.signal.aborted) return false;
  const gates = limits.gates ?? [];
  // A tool without limits has no key to back off for others: the call alone waits what it was told.
  const waitMs =
    gates.length > 0 ? await scope.env.limiter.backOff(gates, retryAfterMs) : (retryAfterMs ?? BACKOFF_ALONE_MS);
  const retries = call.tool!.effect !== 'unsafe' && Date.now() + waitMs < deadlineAt;
  const told = {
    why: 'backoff' as const,
    scope: gates[0]?.scope ?? `tool:${call.toolName}`,
    key: gates[0]?.key ?? '',
    waitMs,
  };
  scope.live.driver.emit('throttled', {
    ...throttledData(told, { tool_call_id: call.id, tool: call.toolName }),
    // Not tried again (an unsafe call, or past its deadline): the model is told.
    ...(retries ? {} : { retry_in_ms: null }),
  });
  await scope.live.driver.flush();
  if (!retries) return false;
  await pause(waitMs, scope.signal);
  return !scope.signal.aborted;
}

/** How long a call of a tool without limits waits after a 429 that gave no hint. */
const BACKOFF_ALONE_MS = 1_000;

/** Saves a call's handle in its `started` row and makes it durable (a no-op once the run left the step). */
async function saveHandle(scope: CallScope, call: PreparedCall, handle: unknown): Promise<void> {
  if (scope.signal.aborted || call.row?.status !== 'started') return;
  // null forgets the handle: the work it named is gone, and a retry starts anew.
  const row = { ...call.row, handle: handle === null || handle === undefined ? null : JSON.stringify(handle) };
  call.row = row;
  scope.live.driver.stageToolCall(row);
  await scope.live.driver.flush();
  failpoint('tool.handle_saved');
}

/** A `progress` event of a call, committed (so a reader sees it while the call still runs). */
async function reportProgress(scope: CallScope, call: PreparedCall, update: ToolProgress): Promise<void> {
  if (scope.signal.aborted) return;
  scope.live.driver.emit('progress', toProgressData(call.id, call.toolName, update));
  await scope.live.driver.flush();
}

/** Records that a human must decide an unresolved call: the row `unknown`, an `uncertain` approval, its event. */
function askHuman(
  scope: CallScope,
  call: PreparedCall,
  approvalId: string,
  attempts: number,
  cause: UnknownOutcome | null,
  reconcileError?: Failure,
): void {
  const { live, runId, stepIndex } = scope;
  // The row keeps what is known of the last attempt (a timeout's failure, say), or says that
  // reconcile() could not find out.
  const result = reconcileError ? JSON.stringify(unreconciled(call, reconcileError)) : (call.row?.result ?? null);
  const row = callRow(runId, stepIndex, call, { status: 'unknown', result });
  call.row = row;
  live.driver.stageToolCall(row);
  const approval = pendingApproval(approvalId, runId, stepIndex, 'uncertain', [call]);
  live.driver.stageApproval(approval);
  live.driver.emit('approval_request', {
    approval_id: approvalId,
    reason: 'uncertain_side_effect',
    tool_calls: [{ id: call.id, tool: call.toolName, args: call.args, risk: call.tool?.risk, attempts }],
    recovery: 'to_human' satisfies Recovery,
    cause,
    ...(reconcileError ? { reconcile_error: reconcileError } : {}),
  });
}

/** The result of a call whose reconcile() failed: its outcome is unknown, and why. */
function unreconciled(call: PreparedCall, reconcileError: Failure): ToolResult {
  const failure = createFailure(
    'tool.outcome_unknown',
    `The outcome of tool '${call.toolName}' is unknown: its reconcile() failed (${reconcileError.message})`,
    { details: { tool_call_id: call.id, reconcile_error: reconcileError } },
  );
  return { status: 'error', content: failure.message, durationMs: 0, truncated: false, retryable: false, failure };
}

/** Stages a large output and the images of a result as artifacts, each stored once by content hash. */
export function storeArtifact(scope: Pick<CallScope, 'env' | 'live'>, outcome: ToolRun): void {
  for (const blob of [...(outcome.artifact ? [outcome.artifact] : []), ...(outcome.images ?? [])]) {
    stageBlob(scope, blob);
  }
}

function stageBlob(scope: Pick<CallScope, 'env' | 'live'>, blob: ArtifactBlob): void {
  scope.live.driver.stage((writer) =>
    writer.putArtifact(
      {
        sha256: blob.sha256,
        size: blob.size,
        media_type: blob.mediaType,
        content: blob.content,
        created_at: Date.now(),
      },
      scope.live.driver.runId,
    ),
  );
  scope.live.driver.emit('artifact', { sha256: blob.sha256, size: blob.size, media_type: blob.mediaType });
}
