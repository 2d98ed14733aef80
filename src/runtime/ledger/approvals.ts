/**
 * Human decisions. An approval is decided once: the compare-and-set on its status runs in the
 * run's own write unit, so of any number of concurrent decisions exactly one commits and the
 * others get `approval.already_decided`. Decisions that settle calls without running them
 * (a rejection, an uncertain call recorded as done or not done) write those ledger rows in the
 * same unit, so no restart can run a call a human refused.
 */
import { getNextSnapshot, type StateValue } from 'xstate';
import { stateName, statusOf } from '../../../machines/run-status.js';
import type { RunEvent } from '../../../machines/types.js';
import { BatonError, createFailure, fail, quoteId } from '../../failure.js';
import { isWriteFailure, type ApprovalRow, type Store } from '../../store/index.js';
import { toErrorResult, type ToolResult } from '../../tools/tool-result.js';
import type { LiveRun, RuntimeEnv } from '../drive/env.js';
import { alreadyDecided, settleCall, stepCalls, type LedgerCall } from './ledger.js';
import { SETTLED_TOOL_CALL_STATUSES, type ToolCallStatus } from '../../store/index.js';
import { failpoint } from '../model/failpoints.js';
import type { ApprovalVote, UncertainResolution } from '../model/types.js';

/** A decision as the runtime applies it. */
export interface DecisionInput {
  approve: boolean;
  by: string;
  reason: string | null;
  /** For uncertain calls: `retry` (run again) or `done` (record that it happened). */
  resolution?: UncertainResolution | undefined;
  /** For rejections of tool approvals: end the run `failed` / `rejected` instead of telling the model. */
  terminate?: boolean | undefined;
  /** With `terminate`: undo the run's completed calls (newest first) before it ends. */
  compensate?: boolean | undefined;
}

function settleWithoutRunning(env: RuntimeEnv, live: LiveRun, approval: ApprovalRow, input: DecisionInput): void {
  const { driver } = live;
  const calls = stepCalls(env, live, approval.run_id, approval.step_index);
  const bound = new Set(JSON.parse(approval.tool_call_ids) as string[]);
  const write = (call: LedgerCall, status: ToolCallStatus, result: ToolResult) =>
    settleCall(driver, approval.step_index, call, status, result, { mode: 'write' });
  if (approval.kind === 'uncertain') {
    const call = calls.find((c) => bound.has(c.id));
    if (!call) return;
    if (input.approve && input.resolution === 'done') {
      write(call, 'succeeded', {
        status: 'ok',
        content: `Recorded by ${input.by} as done${input.reason ? `: ${input.reason}` : ''}`,
        durationMs: 0,
        truncated: false,
        retryable: false,
        recordedBy: input.by,
      });
    } else if (!input.approve) {
      const failure = createFailure(
        'tool.failed',
        `Tool '${call.toolName}' was interrupted and ${input.by} recorded that it did not take effect${input.reason ? `: ${input.reason}` : ''}`,
        { retryable: true },
      );
      write(call, 'failed', toErrorResult(failure));
    }
    return;
  }
  if (approval.kind === 'version') {
    const call = calls.find((c) => bound.has(c.id));
    if (!call || input.approve) return;
    const failure = createFailure(
      'tool.version_mismatch',
      `${input.by} did not run tool '${call.toolName}' with version ${call.tool?.version ?? '?'}: the call was decided with another version${input.reason ? `: ${input.reason}` : ''}`,
    );
    write(call, 'rejected', toErrorResult(failure));
    return;
  }
  if (input.approve) return;
  // A rejected step goes back to the model: the refused calls say so, the rest were not run.
  for (const call of calls) {
    if (call.row && SETTLED_TOOL_CALL_STATUSES.has(call.row.status)) continue;
    const refused = bound.has(call.id);
    const failure = refused
      ? createFailure(
          'policy.denied',
          `${input.by} rejected tool '${call.toolName}'${input.reason ? `: ${input.reason}` : ''}`,
        )
      : createFailure('policy.denied', `Not run: the approval of this step was rejected`);
    write(call, refused ? 'rejected' : 'skipped', toErrorResult(failure));
  }
}

/** The machine event of a decision. */
function decisionEvent(approvalId: string, input: DecisionInput): RunEvent {
  return input.approve
    ? { type: 'approved', approvalId, by: input.by }
    : {
        type: 'rejected',
        approvalId,
        terminate: input.terminate === true,
        by: input.by,
        ...(input.terminate && input.compensate ? { compensate: true } : {}),
      };
}

/** True when a snapshot waits for a human on this approval. */
function waitsOn(snapshot: { value: StateValue; context: { pendingApprovalId: string | null } }, id: string): boolean {
  return statusOf(snapshot.value) === 'waiting_human' && snapshot.context.pendingApprovalId === id;
}

type Outcome = 'final' | 'vote' | 'refused' | 'decided';

/**
 * Decides an approval of a live run; resolves once the decision and the resumed transition are
 * durable. The run's machine says what a decision is: Baton's machine leaves the wait on any
 * decision (the approval is decided, single use); a variant may take it and keep waiting on the
 * same approval (a vote, recorded on the approval, which stays pending), or not take it at all
 * (`approval.refused`). What the machine does is read from the snapshot inside the run's write
 * unit, so the classification and the compare-and-set see the same state.
 */
export async function decideApproval(
  env: RuntimeEnv,
  live: LiveRun,
  approvalId: string,
  input: DecisionInput,
  options: { apply?: boolean } = {},
): Promise<ApprovalRow> {
  const { driver } = live;
  const runId = driver.runId;
  // The run's approvals are in its memory: this runtime holds its lease, no one else writes them.
  const existing = driver.memory.approvals.get(approvalId);
  if (!existing || existing.run_id !== runId) {
    fail('approval.not_found', `Approval ${quoteId(approvalId)} does not exist on run ${quoteId(runId)}`);
  }
  const event = decisionEvent(approvalId, input);
  const decision = input.approve ? ('approved' as const) : ('rejected' as const);
  // Set inside the write unit below; read once it has committed.
  let outcome = 'decided' as Outcome;
  let refusedIn = '';
  driver.stage((writer) => {
    const snapshot = driver.actor.getSnapshot();
    const waiting = waitsOn(snapshot, approvalId);
    if (waiting && !snapshot.can(event)) {
      outcome = 'refused';
      refusedIn = stateName(snapshot.value);
      return;
    }
    const vote = waiting && waitsOn(getNextSnapshot(driver.actor.logic, snapshot, event), approvalId);
    if (vote) {
      const at = Date.now();
      const current = driver.memory.approvals.get(approvalId) ?? existing;
      if (current.status !== 'pending') return;
      const votes = JSON.stringify([
        ...(JSON.parse(current.votes) as ApprovalVote[]),
        { by: input.by, decision, reason: input.reason, at },
      ]);
      writer.setApprovalVotes(approvalId, votes);
      driver.memory.approvals.set(approvalId, { ...current, votes });
      outcome = 'vote';
      driver.writeEvent('approval_result', {
        approval_id: approvalId,
        decision,
        by: input.by,
        reason: input.reason,
        final: false,
      });
      // In this unit: the snapshot holding the vote is written with it.
      driver.actor.send(event);
      return;
    }
    const current = driver.memory.approvals.get(approvalId) ?? existing;
    if (current.status !== 'pending') return;
    const decided = {
      status: decision,
      // How a human resolved an uncertain call (retry by default), or a rejection that ends the run.
      resolution:
        input.approve && existing.kind === 'uncertain'
          ? (input.resolution ?? 'retry')
          : !input.approve && input.terminate
            ? input.compensate
              ? ('compensate' as const)
              : ('terminate' as const)
            : null,
      by: input.by,
      reason: input.reason,
      at: Date.now(),
    };
    writer.decideApproval(approvalId, decided);
    driver.memory.approvals.set(approvalId, {
      ...current,
      status: decided.status,
      resolution: decided.resolution,
      decided_by: decided.by,
      reason: decided.reason,
      decided_at: decided.at,
    });
    outcome = 'final';
    // Until the run leaves this wait, it is due at once: a crash before that resumes it on open.
    writer.setWakeAt(runId, 0);
    driver.writeEvent('approval_result', {
      approval_id: approvalId,
      decision,
      by: input.by,
      reason: input.reason,
      final: true,
      ...(input.resolution ? { resolution: input.resolution } : {}),
      ...(input.terminate ? { terminate: true } : {}),
      ...(input.terminate && input.compensate ? { compensate: true } : {}),
    });
    settleWithoutRunning(env, live, existing, input);
  });
  await driver.flush();
  if (outcome === 'refused') {
    throw new BatonError(
      createFailure(
        'approval.refused',
        `Run '${runId}' in state '${refusedIn}' does not take this decision by ${input.by} on approval '${approvalId}'`,
        { details: { state: refusedIn, by: input.by, decision } },
      ),
    );
  }
  const after = () => driver.memory.approvals.get(approvalId)!;
  if (outcome === 'decided') throw new BatonError(alreadyDecided(after()));
  if (outcome === 'vote') return after();
  failpoint('approval.committed');
  // A runtime that drives no runs leaves applying it to the worker that claims the run.
  if (options.apply === false) return after();
  resumeAfterDecision(live, after());
  // The decision is durable: a transition the database then refuses is made again when the run
  // is picked up from the file (see the registry's readopt), so the decision stands.
  await driver.flush().catch((error: unknown) => {
    if (!(error instanceof BatonError && isWriteFailure(error.failure))) throw error;
  });
  return after();
}

/** Sends the machine the event a committed decision calls for, if it is still waiting on it. */
export function resumeAfterDecision(live: LiveRun, approval: ApprovalRow): void {
  const { actor } = live.driver;
  if (!waitsOn(actor.getSnapshot(), approval.id)) return;
  const by = approval.decided_by ?? undefined;
  if (approval.status === 'approved') actor.send({ type: 'approved', approvalId: approval.id, by });
  else if (approval.status === 'rejected') {
    const compensate = approval.resolution === 'compensate';
    actor.send({
      type: 'rejected',
      approvalId: approval.id,
      terminate: compensate || approval.resolution === 'terminate',
      by,
      ...(compensate ? { compensate } : {}),
    });
  }
}

/** Checks an approval before its run is loaded, so a decided one always answers `already_decided`. */
export async function assertPendingApproval(store: Store, runId: string, approvalId: string): Promise<ApprovalRow> {
  if (!(await store.getRun(runId))) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
  const approval = await store.getApproval(approvalId);
  if (!approval || approval.run_id !== runId) {
    fail('approval.not_found', `Approval ${quoteId(approvalId)} does not exist on run ${quoteId(runId)}`);
  }
  if (approval.status !== 'pending') throw new BatonError(alreadyDecided(approval));
  return approval;
}
