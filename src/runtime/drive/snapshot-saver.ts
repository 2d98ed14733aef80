/**
 * Saving a run's snapshot: with each write, the actor's latest persisted snapshot and the run's
 * columns read from it (status, counters, failure, wake time), compare-and-set on the version,
 * and only when it changed since the last save.
 */
import type { Actor, StateValue } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import { statusOf } from '../../../machines/run-status.js';
import { TERMINAL_STATUSES, type RunContext, type RunStatus } from '../../../machines/types.js';
import type { Failure } from '../../failure.js';
import type { RunProgress, UnitWriter } from '../../store/index.js';
import { toRunCompensation } from '../model/event-data.js';
import { failpoint } from '../model/failpoints.js';
import { wakeAtOf } from './wake-at.js';
import type { ApprovalRow } from '../../store/index.js';

/** The statuses a run ends in. */
export const TERMINAL: ReadonlySet<RunStatus> = new Set(TERMINAL_STATUSES);

/** What saving a run's snapshot needs. */
export interface SnapshotSaverDeps {
  runId: string;
  actor: Actor<RunMachine>;
  /** The version stored with every snapshot. */
  machineVersion: number;
  /** A terminal failure with the calls whose outcome the run's end left unknown. */
  withUnknown(failure: Failure): Failure;
  /** The run's approvals: a pending wait's expiry is when the run wakes. */
  approvals: ReadonlyMap<string, ApprovalRow>;
}

/** Where the run's stored snapshot stands: its version and its JSON (empty for a new run). */
export interface SavedSnapshot {
  version: number;
  json: string;
}

/** The snapshot saving of one run. */
export interface SnapshotSaver {
  /** Set by each transition: the next write looks at the snapshot. */
  dirty: boolean;
  /** Saves the latest snapshot in `writer`'s unit, if it changed since the last save. */
  save(writer: UnitWriter): void;
}

/** Creates the snapshot saving of one run, from where its stored snapshot stands. */
export function createSnapshotSaver(deps: SnapshotSaverDeps, from: SavedSnapshot): SnapshotSaver {
  let { version, json: persistedJson } = from;
  const saver: SnapshotSaver = {
    dirty: false,
    save(writer) {
      if (!saver.dirty) return;
      saver.dirty = false;
      const latest = deps.actor.getPersistedSnapshot() as unknown as { context: RunContext; value: StateValue };
      const json = JSON.stringify(latest);
      if (json === persistedJson) return;
      const status = statusOf(latest.value);
      if (TERMINAL.has(status)) failpoint('run.terminal');
      writer.saveProgress(toProgress(deps, latest.context, status, json, version));
      version += 1;
      persistedJson = json;
    },
  };
  return saver;
}

/** The run's columns as the snapshot `json` (of `ctx` in `status`) stores them. */
function toProgress(
  deps: SnapshotSaverDeps,
  ctx: RunContext,
  status: RunStatus,
  json: string,
  version: number,
): RunProgress {
  const terminal = TERMINAL.has(status);
  return {
    id: deps.runId,
    expected_version: version,
    snapshot: json,
    status,
    stop_reason: ctx.stopReason,
    failure: ctx.failure ? JSON.stringify(terminal ? deps.withUnknown(ctx.failure) : ctx.failure) : null,
    wait_reason: ctx.waitReason,
    pending_approval_id: ctx.pendingApprovalId,
    step_index: ctx.stepIndex,
    llm_calls: ctx.llmCalls,
    tool_calls: ctx.toolCalls,
    tokens: ctx.tokens,
    cost_usd: ctx.costUsd,
    machine_version: deps.machineVersion,
    wake_at: status === 'waiting_human' ? wakeAtOf(ctx, deps.approvals) : null,
    deadline_at: ctx.deadlineAt,
    compensation: ctx.compensation ? JSON.stringify(toRunCompensation(ctx.compensation, terminal)) : null,
    updated_at: Date.now(),
  };
}
