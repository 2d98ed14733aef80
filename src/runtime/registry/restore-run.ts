/**
 * Restoring a persisted run: the one way a run in the file becomes a live one here, whichever
 * verb asked for it (a decision or a wake-up, recovery on open, a worker's claim, a retry after
 * a failed commit). Invariants: the lease is claimed before anything is read, so nothing another
 * runtime wrote is missed and nothing it writes follows; a run is driven only under its claim;
 * the restored driver finishes what a crash or another owner left half-done.
 */
import type { RunMachineDefinition } from '../../../machines/variants.js';
import { ACTIVE_STATUSES } from '../../../machines/types.js';
import type { HeldRun, RunRow, Store } from '../../store/index.js';
import { resumeAfterDecision } from '../ledger/approvals.js';
import type { LiveRun } from '../drive/env.js';
import { isDeadOwner } from '../drive/leases.js';
import { restorableSnapshot } from '../drive/restore.js';
import { createDriver, type DriverDeps } from '../drive/run-driver.js';
import { wakeAtOf } from '../drive/wake-at.js';
import { loadRunMemory, type RunMemory } from '../drive/run-memory.js';
import type { LiveRuns } from './live-runs.js';

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATUSES);

/** What restoring a run needs from the registry. */
export interface RestoreDeps {
  store: Store;
  owner: string;
  /** How long a claim lasts without renewal. */
  leaseMs: number;
  definition: RunMachineDefinition;
  driverDeps: DriverDeps;
  table: LiveRuns;
  isClosed(): boolean;
  /** The run is driven here now: whatever kept it from being driven before is no longer so. */
  restored(runId: string): void;
  /** Carries out what another runtime asked of a run driven here (a cancel, a pause). */
  asked(run: HeldRun): void;
  /** Applies the expiry of a wait whose instant has passed. */
  expire?: (run: LiveRun, approvalId: string) => Promise<void>;
  /** Polls the work a run's call left running elsewhere, once its poll is due (a task wait). */
  checkTask?: (run: LiveRun, approvalId: string) => void;
  /** A run loaded waiting on a child: taken now if the child has ended. */
  waitsOnChild?: (run: LiveRun) => void;
  /** A child run was loaded: if its parent has ended, it ends too. */
  childLoaded?: (run: LiveRun) => void;
}

/**
 * Loads a persisted run into this runtime and starts driving it; undefined when another runtime
 * holds it or it is no longer active. `claimed` is the epoch of a claim already taken (a
 * worker's poll). Throws `run.machine_mismatch` for a run this machine cannot restore.
 */
export type RestoreRun = (row: RunRow, claimed?: number) => Promise<LiveRun | undefined>;

/** Creates the restore of one registry; callers restoring one run at the same time share it. */
export function createRestore(deps: RestoreDeps): RestoreRun {
  return (row, claimed) => deps.table.once(row.id, () => restore(deps, row, claimed));
}

async function restore(deps: RestoreDeps, row: RunRow, claimed: number | undefined): Promise<LiveRun | undefined> {
  const { store, owner, definition, table } = deps;
  // Before the claim: a run this machine cannot restore is never claimed.
  const snapshot = restorableSnapshot(row, definition);
  const epoch = claimed ?? (await store.claimRun(row.id, owner, deps.leaseMs, isDeadOwner));
  if (epoch === null) return undefined;
  // Read after the claim: no other runtime writes the run from here on.
  const [current, lastSeq, memory] = await Promise.all([
    store.getRun(row.id),
    store.lastSeq(row.id),
    loadRunMemory(store, row.id),
  ]);
  const already = table.runs.get(row.id);
  if (already) {
    // Driven here already (loaded meanwhile): it carries this claim from now on.
    already.driver.reclaimed(epoch);
    return already;
  }
  if (deps.isClosed() || !current || !ACTIVE.has(current.status)) {
    await store.releaseLease(row.id, owner, epoch);
    return undefined;
  }
  const driver = createDriver(deps.driverDeps, row.id, {
    kind: 'restore',
    snapshot: current.version === row.version ? snapshot : restorableSnapshot(current, definition),
    version: current.version,
    lastSeq,
    epoch,
    memory,
  });
  const run = table.register(current, driver);
  deps.restored(row.id);
  driver.start();
  catchUp(deps, run, current, memory);
  return run;
}

/** Finishes what happened to a run while no driver held it here, read from its row and ledger. */
function catchUp(deps: RestoreDeps, run: LiveRun, current: RunRow, memory: RunMemory): void {
  const { driver } = run;
  // Finish what a crash interrupted between two commits.
  if (driver.status === 'pending') driver.actor.send({ type: 'start' });
  // A cancel (or a pause) asked while another runtime held the run is this one's to carry out.
  if (current.cancel_requested || current.pause_requested) deps.asked(current);
  // A child whose parent ended while no process drove it (a crash) ends too.
  if (run.parent) deps.childLoaded?.(run);
  if (driver.status !== 'waiting_human') return;
  const approvalId = driver.context().pendingApprovalId;
  const approval = approvalId ? memory.approvals.get(approvalId) : undefined;
  if (approval && approval.status !== 'pending') {
    // Decided while out of memory (or by another runtime): apply the decision now.
    resumeAfterDecision(run, approval);
    return;
  }
  if (approval?.kind === 'task' && approval.expires_at != null && approval.expires_at <= Date.now()) {
    // Woken to poll the work its call left running elsewhere.
    deps.checkTask?.(run, approval.id);
    return;
  }
  if (approval?.expires_at != null && approval.expires_at <= Date.now() && deps.expire) {
    // Woken at the instant its wait expires (after any restart): the expiry's outcome applies now.
    deps.expire(run, approval.id).catch(() => undefined);
    return;
  }
  if (approval?.kind === 'child') deps.waitsOnChild?.(run);
  const at = wakeAtOf(driver.context(), memory.approvals);
  if (current.wake_at !== at) {
    // A wake-up that is no longer due (stored by an older version, or left behind): set it right.
    driver.stage((writer) => writer.setWakeAt(current.id, at));
    driver.flush().catch(() => undefined);
  }
}
