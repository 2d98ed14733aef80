/**
 * Human decisions. An approval is decided once: the compare-and-set on its status runs in the
 * run's own write unit, so of any number of concurrent decisions exactly one commits and the
 * others get `approval.already_decided`. Decisions that settle calls without running them
 * (a rejection, an uncertain call recorded as done or not done) write those ledger rows in the
 * same unit, so no restart can run a call a human refused.
 */
import { getNextSnapshot, type StateValue } from 'xstate';
import { isTerminalStatus, stateName, statusOf } from '../../../machines/run-status.js';
import type { ExpiryOutcome } from '../../../machines/types.js';
import { BatonError, createFailure, fail, quoteId, type Failure } from '../../failure.js';
import { isWriteFailure, type ApprovalRow, type Store } from '../../store/index.js';
import { wakeAtOf } from '../drive/wake-at.js';
import type { LiveRun, RuntimeEnv } from '../drive/env.js';
import { alreadyDecided } from './ledger.js';
import { failpoint } from '../model/failpoints.js';
import { decidedRow, tellInFlight } from './question-rows.js';
import type { ApprovalVote } from '../model/types.js';
import {
  approves,
  decisionEvent,
  settleWithoutRunning,
  storedDecision,
  storedEvent,
  type DecisionInput,
} from './decision-effects.js';

export { approves, type DecisionInput } from './decision-effects.js';

/** True when a snapshot waits on this approval (for a human, or for a child run). */
export function waitsOn(
  snapshot: { value: StateValue; context: { pendingApprovalId: string | null } },
  id: string,
): boolean {
  return statusOf(snapshot.value) === 'waiting_human' && snapshot.context.pendingApprovalId === id;
}

type Outcome = 'final' | 'vote' | 'refused' | 'decided' | 'expired' | 'ended';

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
  if (driver.retired || isTerminalStatus(driver.status)) {
    fail('run.invalid_transition', `Run '${runId}' ended (${driver.status}): no decision on it counts any more`, {
      details: { state: driver.status, event: event.type },
    });
  }
  const decision = approves(input) ? ('approved' as const) : ('rejected' as const);
  // Set inside the write unit below; read once it has committed.
  let outcome = 'decided' as Outcome;
  let refusedIn = '';
  driver.stage((writer) => {
    const snapshot = driver.actor.getSnapshot();
    // Ended since it was loaded (a child whose parent ended is cancelled as it loads): no decision counts.
    if (isTerminalStatus(statusOf(snapshot.value))) {
      outcome = 'ended';
      refusedIn = stateName(snapshot.value);
      return;
    }
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
    if (current.expires_at !== null && current.expires_at <= Date.now()) {
      outcome = 'expired';
      return;
    }
    const stored = storedDecision(env, live, current, input);
    const decided = {
      status: decision,
      resolution: stored.resolution,
      by: input.by,
      reason: input.reason,
      at: Date.now(),
      answer: stored.answer === null ? null : JSON.stringify(stored.answer),
      args_hash: stored.argsHash,
    };
    writer.decideApproval(approvalId, decided);
    driver.memory.approvals.set(approvalId, decidedRow(current, decided));
    outcome = 'final';
    // Until the run leaves this wait, it is due at once: a crash before that resumes it on open.
    // (A question asked in flight is no wait of the run's: the call that asked takes the answer.)
    if (waiting) writer.setWakeAt(runId, 0);
    if (current.kind === 'input') {
      driver.writeEvent('input_result', {
        input_id: approvalId,
        ...(input.decision === 'answer' ? { answer: input.answer } : { declined: true }),
        by: input.by,
        reason: input.reason,
      });
    } else {
      driver.writeEvent('approval_result', {
        approval_id: approvalId,
        decision,
        ...(input.decision !== 'approve' && input.decision !== 'reject' ? { action: input.decision } : {}),
        ...(stored.answer ? { given: stored.answer } : {}),
        by: input.by,
        reason: input.reason,
        final: true,
        ...(input.resolution ? { resolution: input.resolution } : {}),
        ...(input.terminate ? { terminate: true } : {}),
        ...(input.terminate && input.compensate ? { compensate: true } : {}),
      });
    }
    settleWithoutRunning(env, live, current, input);
  });
  await driver.flush().catch((error: unknown) => {
    // The run ended in this very unit's turn and its driver retired: the decision was not written.
    if (!(outcome === 'ended' && error instanceof BatonError && error.code === 'run.closed')) throw error;
  });
  if (outcome === 'ended') {
    fail('run.invalid_transition', `Run '${runId}' ended (${refusedIn}): no decision on it counts any more`, {
      details: { state: refusedIn, event: decisionEvent(approvalId, input).type },
    });
  }
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
  if (outcome === 'expired') {
    // Past its instant: the expiry's outcome applies (once), and this decision does not count.
    await expireWait(env, live, approvalId).catch(() => undefined);
    throw new BatonError(expiredFailure(after()));
  }
  if (outcome === 'decided') throw new BatonError(alreadyDecided(after()));
  if (outcome === 'vote') return after();
  failpoint('approval.committed');
  // A runtime that drives no runs leaves applying it to the worker that claims the run.
  if (options.apply === false) return after();
  tellInFlight(live, after());
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
  const event = storedEvent(approval);
  if (event) actor.send(event);
}

/** The failure of a decision on a wait that expired. */
function expiredFailure(approval: ApprovalRow): Failure {
  return createFailure(
    'approval.expired',
    `Approval '${approval.id}' expired at ${new Date(approval.expires_at ?? 0).toISOString()}: no decision counts any more`,
    { details: { status: approval.status, expires_at: approval.expires_at } },
  );
}

/**
 * Applies a pending wait's expiry once its instant has passed: `escalate` hands it to another
 * role (once, with no further expiry); `reject` refuses it as a rejection would (the model is
 * told; a budget wait ends the run); `end` ends the run (`approval.expired`). In the run's own
 * write unit, with the same compare-and-set as a decision: of an expiry and a decision, one wins.
 */
export async function expireWait(env: RuntimeEnv, live: LiveRun, approvalId: string): Promise<void> {
  const { driver } = live;
  let expired: ApprovalRow | undefined;
  driver.stage((writer) => {
    const current = driver.memory.approvals.get(approvalId);
    if (!current || current.status !== 'pending' || current.expires_at === null || current.kind === 'task') return;
    if (current.expires_at > Date.now() || !waitsOn(driver.actor.getSnapshot(), approvalId)) return;
    const expiry = current.expiry ? (JSON.parse(current.expiry) as { outcome: ExpiryOutcome; role?: string }) : null;
    if (expiry?.outcome === 'escalate' && expiry.role) {
      const escalated = { ...current, role: expiry.role, expires_at: null, expiry: null };
      writer.escalateApproval(approvalId, { role: expiry.role, expires_at: null, expiry: null });
      driver.memory.approvals.set(approvalId, escalated);
      writer.setWakeAt(driver.runId, wakeAtOf(driver.context(), driver.memory.approvals));
      driver.writeEvent('approval_result', {
        approval_id: approvalId,
        decision: 'escalated',
        from_role: current.role,
        role: expiry.role,
        final: false,
      });
      return;
    }
    const outcome = expiry?.outcome === 'end' ? ('end' as const) : ('reject' as const);
    const at = Date.now();
    const reason = `no decision before ${new Date(current.expires_at).toISOString()}`;
    writer.decideApproval(approvalId, {
      status: 'expired',
      resolution: outcome,
      by: EXPIRY_DECIDER,
      reason,
      at,
      answer: null,
      args_hash: current.args_hash,
    });
    expired = {
      ...current,
      status: 'expired',
      resolution: outcome,
      decided_by: EXPIRY_DECIDER,
      reason,
      decided_at: at,
    };
    driver.memory.approvals.set(approvalId, expired);
    writer.setWakeAt(driver.runId, 0);
    driver.writeEvent(current.kind === 'input' ? 'input_result' : 'approval_result', {
      [current.kind === 'input' ? 'input_id' : 'approval_id']: approvalId,
      decision: 'expired',
      outcome,
      by: EXPIRY_DECIDER,
      reason,
      final: true,
    });
    settleWithoutRunning(env, live, current, { decision: 'reject', by: EXPIRY_DECIDER, reason });
  });
  await driver.flush();
  if (expired) resumeAfterDecision(live, expired);
}

/** Who an expiry is recorded as decided by. */
export const EXPIRY_DECIDER = 'baton:expiry';

/** Checks an approval before its run is loaded, so a decided one always answers `already_decided`. */
export async function assertPendingApproval(store: Store, runId: string, approvalId: string): Promise<ApprovalRow> {
  if (!(await store.getRun(runId))) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
  const approval = await store.getApproval(approvalId);
  if (!approval || approval.run_id !== runId) {
    fail('approval.not_found', `Approval ${quoteId(approvalId)} does not exist on run ${quoteId(runId)}`);
  }
  if (approval.status === 'expired') throw new BatonError(expiredFailure(approval));
  if (approval.status !== 'pending') throw new BatonError(alreadyDecided(approval));
  // A task wait's `expires_at` is its next poll, not the end of anyone's time to decide.
  if (approval.kind !== 'task' && approval.expires_at !== null && approval.expires_at <= Date.now()) {
    throw new BatonError(expiredFailure(approval));
  }
  return approval;
}
