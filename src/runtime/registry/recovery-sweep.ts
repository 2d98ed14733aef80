/**
 * Recovery on open: the runs in flight (pending, planning, executing) that no live runtime drives
 * are resumed, a batch at once and the rest a batch a turn of the event loop; the waiting ones
 * stay in the file, their wake-ups armed and their rows checked in the background; a row with a
 * status no state has, and a run of an agent no live process has, are reported. On PostgreSQL,
 * shared by many workers, a batch of what no one holds is claimed instead of every run in flight.
 * Invariants: a run that cannot be resumed is reported and left untouched, and stops no other
 * run; opening costs what is in flight, not what waits.
 */
import type { RunMachineDefinition } from '../../../machines/variants.js';
import { LISTED_STATUSES } from '../../../machines/types.js';
import { toFailure, type Failure } from '../../failure.js';
import type { Claim, RunRow, Store } from '../../store/index.js';
import { isDeadOwner } from '../drive/leases.js';
import { checkRunRow, sweepWaitingRows } from '../drive/quarantine.js';
import { machineMismatchOf } from '../drive/restore.js';
import { agentMismatchOf, type AgentIdentity } from './agent-identity.js';
import type { LiveRuns } from './live-runs.js';
import type { RecoveryFailures } from './recovery-failures.js';
import type { RestoreRun } from './restore-run.js';

/** Runs in flight resumed per turn of the event loop on open. */
const RECOVER_BATCH = 50;
/** Waiting runs whose rows the integrity sweep checks per turn of the event loop. */
const SWEEP_BATCH = 100;

/** What recovery needs from the registry. */
export interface RecoveryDeps {
  store: Store;
  owner: string;
  /** How long a claim lasts without renewal. */
  leaseMs: number;
  agent: AgentIdentity;
  definition: RunMachineDefinition;
  table: LiveRuns;
  restore: RestoreRun;
  /** Drives a run claimed here (`adopt-run.ts`). */
  adopt(claim: Claim): Promise<void>;
  reports: RecoveryFailures;
  /** Arms the wake-ups of the waiting runs from the file. */
  armWakeUps(): void;
  /** Told of a background task of recovery that failed as a whole. */
  onError(failure: Failure, activity: string): void;
  isClosed(): boolean;
}

/**
 * Creates recovery for one registry: resumes the runs in flight no live runtime drives and
 * returns their ids (those a later turn resumes included).
 */
export function createRecovery(deps: RecoveryDeps): () => Promise<string[]> {
  return async () => {
    await reportUnknownStatuses(deps);
    deps.armWakeUps();
    void sweepWaitingRows(deps.store, {
      batch: SWEEP_BATCH,
      isClosed: deps.isClosed,
      check: (row) => checkRunRow(row) ?? machineMismatchOf(row, deps.definition),
      report: (id, problem) => deps.reports.report(id, problem),
    }).catch((error: unknown) => deps.onError(toFailure(error), 'checking the rows of waiting runs'));
    // Runs in flight of an agent no live process has: reported (a batch), never adopted here.
    for (const orphan of await deps.store.orphansOfOtherAgents(deps.agent.set, RECOVER_BATCH)) {
      deps.reports.report(orphan.id, agentMismatchOf(orphan, deps.agent)!);
    }
    return deps.store.dialect === 'postgres' ? claimInFlight(deps) : resumeInFlight(deps);
  };
}

/** A row with a status no state has is reported, not skipped. */
async function reportUnknownStatuses(deps: RecoveryDeps): Promise<void> {
  for (const id of await deps.store.runIdsWithStatusNotIn(LISTED_STATUSES)) {
    const row = await deps.store.getRun(id);
    if (row) deps.reports.report(id, checkRunRow(row)!);
  }
}

/** Shared by many workers: claims what no one holds (a batch; the claim loop takes the rest). */
async function claimInFlight(deps: RecoveryDeps): Promise<string[]> {
  const { store, owner, leaseMs, agent } = deps;
  const claims = await store.claimRuns(owner, leaseMs, RECOVER_BATCH, agent.set);
  // A process of this host that is gone (a restart after a crash) need not wait for its leases.
  for (const dead of (await store.inFlightOwners()).filter((o) => o !== owner && isDeadOwner(o))) {
    claims.push(...(await store.claimRunsOf(dead, owner, leaseMs, RECOVER_BATCH, agent.set)));
  }
  await Promise.all(claims.map(deps.adopt));
  return claims.map((claim) => claim.id).filter((id) => deps.table.runs.has(id));
}

/** Alone on its file: tries every run in flight, the first batch now and the rest a batch a turn. */
async function resumeInFlight(deps: RecoveryDeps): Promise<string[]> {
  const { table } = deps;
  const resumed: string[] = [];
  const all = await deps.store.inFlightRunIds();
  // Driven here already (this runtime's claim loop took them meanwhile): resumed all the same.
  for (const id of all) if (table.runs.has(id) || table.isLoading(id)) resumed.push(id);
  const inFlight = all.filter((id) => !table.runs.has(id) && !table.isLoading(id));
  // A large backlog never holds the event loop long.
  const first = inFlight.slice(0, RECOVER_BATCH);
  const done = await Promise.all(first.map((id) => recoverOne(deps, id)));
  first.forEach((id, i) => done[i] && resumed.push(id));
  const later = inFlight.slice(RECOVER_BATCH);
  if (later.length > 0) void recoverLater(deps, later);
  return [...resumed, ...later];
}

async function recoverLater(deps: RecoveryDeps, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length && !deps.isClosed(); i += RECOVER_BATCH) {
    await new Promise((resolve) => setImmediate(resolve));
    await Promise.all(ids.slice(i, i + RECOVER_BATCH).map((id) => recoverOne(deps, id)));
  }
}

/** Resumes one run in flight found on open; false when it is not resumed (reported, or driven elsewhere). */
async function recoverOne(deps: RecoveryDeps, id: string): Promise<boolean> {
  const { store, reports } = deps;
  if (deps.isClosed() || deps.table.runs.has(id)) return false;
  // One run that cannot be resumed (e.g. saved by a newer machine) must not stop the others.
  try {
    const row = await store.getRun(id);
    const damage = row ? checkRunRow(row) : null;
    if (damage) {
      reports.report(id, damage);
      return false;
    }
    const mismatch = row ? agentMismatchOf(row, deps.agent) : null;
    if (row && mismatch) {
      // Another agent's run: reported only when no live runtime (of its agent) holds it.
      if (!isHeldElsewhere(row, deps.owner)) reports.report(id, mismatch);
      return false;
    }
    return row !== undefined && (await deps.restore(row)) !== undefined;
  } catch (error) {
    reports.report(id, toFailure(error));
    await store.releaseLease(id, deps.owner).catch(() => undefined);
    return false;
  }
}

/** True when another runtime, alive as far as this host knows, holds the run's lease now. */
function isHeldElsewhere(row: RunRow, owner: string): boolean {
  return row.owner !== null && row.owner !== owner && !isDeadOwner(row.owner) && (row.lease_until ?? 0) > Date.now();
}
