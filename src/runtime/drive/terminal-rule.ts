/**
 * The terminal rule: a run succeeds only when its last decision is a final answer and its ledger
 * has nothing open (no call started or of unknown outcome, no approval pending). The executor
 * checks it before it answers `done`; an event delivered from outside (`runtime.send`) is held
 * to the same rule, so no path in can finish a run over an open call.
 */
import { getNextSnapshot, type SnapshotFrom } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import { statusOf } from '../../../machines/run-status.js';
import type { RunEvent } from '../../../machines/types.js';
import { fail } from '../../failure.js';
import { SETTLED_TOOL_CALL_STATUSES } from '../../store/index.js';
import type { RunDriver } from './run-driver.js';

/** Why the run may not succeed now, or null when it may. */
export function whyNotTerminal(driver: RunDriver): string | null {
  const { memory } = driver;
  const open = memory.toolCalls().filter((row) => !SETTLED_TOOL_CALL_STATUSES.has(row.status));
  if (open.length > 0) return `tool call ${open[0]!.id} is ${open[0]!.status}`;
  const pending = [...memory.approvals.values()].find((a) => a.status === 'pending');
  if (pending) return `approval ${pending.id} is pending`;
  const decision = memory.journal.get(driver.context().stepIndex)?.decision;
  if (decision?.type !== 'final') return `step ${driver.context().stepIndex} has no final answer`;
  return null;
}

/** Refuses an outside event that would make the run succeed against the terminal rule. */
export function refuseUnearnedSuccess(driver: RunDriver, snapshot: SnapshotFrom<RunMachine>, event: RunEvent): void {
  if (statusOf(snapshot.value) === 'succeeded') return;
  const next = getNextSnapshot(driver.actor.logic, snapshot, event);
  if (statusOf(next.value) !== 'succeeded') return;
  const why = whyNotTerminal(driver);
  if (why === null) return;
  fail('run.invalid_transition', `Run '${driver.runId}' cannot succeed on '${event.type}': ${why}`, {
    details: { state: snapshot.value, event: event.type, reason: why },
  });
}
