/**
 * The run registry: which runs this runtime drives, and how a persisted run becomes a live one.
 * It loads runs (the runs in flight on open; a waiting run when a decision, a cancel or its
 * wake-up comes), refuses runs of another machine or a newer version, quarantines damaged rows,
 * and picks a run up again from the file after a failed commit. A run durably waiting for a
 * human leaves memory: no actor, no timer; the wake scheduler loads it at its deadline.
 * Invariants: a run is driven only after its lease is claimed; at most one live driver per
 * run; a run that cannot be resumed is reported in `recoveryFailures` and left untouched, and
 * stops no other run; opening costs what is in flight, not what waits.
 */
import { createActor, type Snapshot, type SnapshotFrom } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import type { RunMachineDefinition } from '../../../machines/variants.js';
import { ACTIVE_STATUSES, RUN_STATUSES, TERMINAL_STATUSES } from '../../../machines/types.js';
import { BatonError, fail, quoteId, toFailure, type Failure } from '../../failure.js';
import type { Claim, RunRow, Store } from '../../store/index.js';
import type { RunUserContext } from '../../tools/define-tool.js';
import { resumeAfterDecision } from '../ledger/approvals.js';
import { stageAnswer } from './commit-answer.js';
import type { LiveRun } from '../drive/env.js';
import type { EventHub } from '../model/event-hub.js';
import { isDeadOwner } from '../drive/leases.js';
import { createLetGo } from './let-go.js';
import { checkRunRow, parseColumn, sweepWaitingRows } from '../drive/quarantine.js';
import { machineMismatchOf, restorableSnapshot } from '../drive/restore.js';
import { createDriver, type DriverDeps, type RunDriver } from '../drive/run-driver.js';
import { loadRunMemory } from '../drive/run-memory.js';
import { wakeAtOf } from '../drive/wake-at.js';
import { createWakeScheduler } from './wake-scheduler.js';
import { createStallRetry } from './stall-retry.js';
import { agentMismatchOf, type AgentIdentity } from './agent-identity.js';
import type { Run } from '../model/types.js';

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATUSES);
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);
/** Runs reported in `recoveryFailures` at most (the newest kept). */
const MAX_REPORTED = 10_000;
/** Runs in flight resumed per turn of the event loop on open. */
const RECOVER_BATCH = 50;
/** Tries, 50 ms apart, to claim a waiting run another runtime is about to let go of. */
const WAITING_CLAIM_ATTEMPTS = 20;
/** Waiting runs whose rows the integrity sweep checks per turn of the event loop. */
const SWEEP_BATCH = 100;

/** What the registry needs from its runtime. */
export interface RegistryDeps {
  store: Store;
  hub: EventHub;
  owner: string;
  /** How long a claim lasts without renewal. */
  leaseMs: number;
  definition: RunMachineDefinition;
  /** The driver settings other than the registry's own callbacks. */
  driver: Omit<DriverDeps, 'onSucceeded' | 'onRetired' | 'owner'>;
  /** The runtime's agent: only its runs are driven here (and runs from before agents were recorded). */
  agent: AgentIdentity;
  /** Told of what went wrong in the background (a run given up, a wake-up that failed). */
  onError?: (failure: Failure, where: BackgroundErrorContext) => void;
}

/** Where a background error happened, for the runtime's `onError`. */
export interface BackgroundErrorContext {
  /** What the runtime was doing: resuming a run after a failed commit, waking a waiting run, recovering on open… */
  activity: string;
  runId?: string;
}

export type { StalledRun } from './stall-retry.js';

/** Creates the registry of one runtime. */
export function createRunRegistry(deps: RegistryDeps) {
  const { store, hub, owner, definition, leaseMs, agent } = deps;
  const live = new Map<string, LiveRun>();
  /** Loads under way, so two callers loading one run share it (one claim, one driver). */
  const loading = new Map<string, Promise<LiveRun | undefined>>();
  /** Runs picked up again after a failed commit, until one of their commits lands. */
  const recoveryFailures = new Map<string, Failure>();
  /** Reports a run that cannot be driven here; the oldest reports go first past a bound. */
  const reportRun = (runId: string, failure: Failure): void => {
    recoveryFailures.delete(runId);
    recoveryFailures.set(runId, failure);
    if (recoveryFailures.size > MAX_REPORTED) recoveryFailures.delete(recoveryFailures.keys().next().value!);
  };
  const report = (failure: Failure, where: BackgroundErrorContext): void => {
    try {
      deps.onError?.(failure, where);
    } catch {
      // A logger that throws must not stop the runtime.
    }
  };
  let closed = false;

  const driverDeps: DriverDeps = {
    ...deps.driver,
    owner,
    onSucceeded(driver) {
      const run = live.get(driver.runId);
      if (run) stageAnswer(driver, run);
    },
    onRetired(driver, failure) {
      // A driver never registered (a new run whose insert failed) is its caller's to report.
      if (live.get(driver.runId)?.driver !== driver) return;
      live.delete(driver.runId);
      if (failure && !closed) stalls.readopt(driver.runId, failure);
      else stalls.clear(driver.runId);
    },
    onIdleWaiting(driver) {
      // On the next turn: whatever applies a decision to this run does so first.
      setImmediate(() => evict(driver));
    },
  };

  // A failed commit loses only what was not durable: the run is picked up again from the file.
  const stalls = createStallRetry({
    isClosed: () => closed,
    async resume(runId) {
      const row = await store.getRun(runId);
      if (!row || !ACTIVE.has(row.status) || live.has(runId)) return undefined;
      return (await resumeOnce(row))?.driver;
    },
    giveUp(runId, failure) {
      hub.fail(runId, failure);
      report(failure, { activity: 'resuming a run after a failed commit', runId });
    },
  });

  const scheduler = createWakeScheduler({
    store,
    wake: (runId) => load(runId, 'wake').then(() => undefined),
    leaseMs,
    agent: agent.name,
    isLive: (runId) => live.has(runId),
    report: (runId, failure) => {
      reportRun(runId, failure);
      report(failure, { activity: 'waking a waiting run', runId });
    },
  });

  function register(row: RunRow, driver: RunDriver): LiveRun {
    const run: LiveRun = {
      driver,
      sessionId: row.session_id,
      input: row.input,
      context: parseColumn(row, 'context', row.context) as RunUserContext,
    };
    live.set(row.id, run);
    return run;
  }

  const snapshotToRestore = (row: RunRow) => restorableSnapshot(row, definition);
  const machineMismatch = (row: RunRow) => machineMismatchOf(row, definition);

  /** `resume`, shared by every caller that loads the same run at the same time. */
  function resumeOnce(row: RunRow, claimed?: number): Promise<LiveRun | undefined> {
    let pending = loading.get(row.id);
    if (!pending) {
      pending = resume(row, claimed).finally(() => loading.delete(row.id));
      loading.set(row.id, pending);
    }
    return pending;
  }

  /**
   * Loads a persisted run into this runtime and starts driving it; undefined when another
   * runtime holds it. `claimed` is the epoch of a claim already taken (a worker's poll).
   */
  async function resume(row: RunRow, claimed?: number): Promise<LiveRun | undefined> {
    const snapshot = snapshotToRestore(row);
    const epoch = claimed ?? (await store.claimRun(row.id, owner, leaseMs, isDeadOwner));
    if (epoch === null) return undefined;
    // Read after the claim: no other runtime writes the run from here on.
    const [current, lastSeq, memory] = await Promise.all([
      store.getRun(row.id),
      store.lastSeq(row.id),
      loadRunMemory(store, row.id),
    ]);
    const already = live.get(row.id);
    if (already) {
      // Driven here already (loaded meanwhile): it carries this claim from now on.
      already.driver.reclaimed(epoch);
      return already;
    }
    if (closed || !current || !ACTIVE.has(current.status)) {
      await store.releaseLease(row.id, owner, epoch);
      return undefined;
    }
    const driver = createDriver(driverDeps, row.id, {
      kind: 'restore',
      snapshot: current.version === row.version ? snapshot : snapshotToRestore(current),
      version: current.version,
      lastSeq,
      epoch,
      memory,
    });
    const run = register(current, driver);
    // Driven now: whatever kept it from being driven before is no longer so.
    recoveryFailures.delete(row.id);
    driver.start();
    // Finish what a crash interrupted between two commits.
    if (driver.status === 'pending') driver.actor.send({ type: 'start' });
    // A cancel asked while another runtime held the run is this one's to carry out.
    if (current.cancel_requested) cancelAsked(row.id, current.cancel_requested);
    if (driver.status === 'waiting_human') {
      const approvalId = driver.context().pendingApprovalId;
      const approval = approvalId ? memory.approvals.get(approvalId) : undefined;
      if (approval && approval.status !== 'pending') resumeAfterDecision(run, approval);
      else if (driver.status === 'waiting_human' && current.wake_at !== wakeAtOf(driver.context())) {
        // A wake-up that is no longer due (stored by an older version, or left behind): set it right.
        const at = wakeAtOf(driver.context());
        driver.stage((writer) => writer.setWakeAt(row.id, at));
        driver.flush().catch(() => undefined);
      }
    }
    return run;
  }

  /** Resumes one run in flight found on open; false when it is not resumed (reported, or driven elsewhere). */
  async function recoverOne(id: string): Promise<boolean> {
    if (closed || live.has(id)) return false;
    // One run that cannot be resumed (e.g. saved by a newer machine) must not stop the others.
    try {
      const row = await store.getRun(id);
      const damage = row ? checkRunRow(row) : null;
      if (damage) {
        reportRun(id, damage);
        return false;
      }
      const mismatch = row ? agentMismatchOf(row, agent) : null;
      if (row && mismatch) {
        // Another agent's run: reported only when no live runtime (of its agent) holds it.
        const held =
          row.owner !== null && row.owner !== owner && !isDeadOwner(row.owner) && (row.lease_until ?? 0) > Date.now();
        if (!held) reportRun(id, mismatch);
        return false;
      }
      return row !== undefined && (await resumeOnce(row)) !== undefined;
    } catch (error) {
      reportRun(id, toFailure(error));
      await store.releaseLease(id, owner).catch(() => undefined);
      return false;
    }
  }

  async function recoverLater(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length && !closed; i += RECOVER_BATCH) {
      await new Promise((resolve) => setImmediate(resolve));
      await Promise.all(ids.slice(i, i + RECOVER_BATCH).map(recoverOne));
    }
  }

  /**
   * The state of a run that is in the file and not live here, restored into an actor that is
   * never started (nothing is claimed or written); undefined for a live run. Throws as `load`.
   */
  async function peek(runId: string, eventType: string): Promise<SnapshotFrom<RunMachine> | undefined> {
    if (live.has(runId)) return undefined;
    const row = await loadableRow(runId, eventType);
    const snapshot = JSON.parse(snapshotToRestore(row)) as Snapshot<unknown>;
    return createActor(driverDeps.machine, { snapshot, input: undefined as never }).getSnapshot();
  }

  /** A run's row if it can be loaded: it exists, is not damaged, and is not finished. */
  async function loadableRow(runId: string, eventType: string): Promise<RunRow> {
    const row = await store.getRun(runId);
    if (!row) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
    const damage = checkRunRow(row);
    if (damage) {
      reportRun(runId, damage);
      throw new BatonError(damage);
    }
    // Another agent's run is never driven with this runtime's tools and planner.
    const mismatch = agentMismatchOf(row, agent);
    if (mismatch) throw new BatonError(mismatch);
    if (!ACTIVE.has(row.status)) {
      fail('run.invalid_transition', `Run '${runId}' in state '${row.status}' cannot take '${eventType}'`, {
        details: { state: row.status, event: eventType },
      });
    }
    return row;
  }

  /** The live run, loading it if it is persisted, not terminal and not driven elsewhere. */
  async function load(runId: string, eventType: string): Promise<LiveRun> {
    for (let attempt = 0; ; attempt += 1) {
      const current = live.get(runId);
      if (current) return current;
      const row = await loadableRow(runId, eventType);
      const run = live.get(runId) ?? (await resumeOnce(row));
      if (run) return run;
      // A waiting run is let go by whoever holds it as soon as it has nothing left to write:
      // a decision that arrives in between waits a moment rather than failing.
      if (row.status !== 'waiting_human' || attempt >= WAITING_CLAIM_ATTEMPTS) {
        fail('run.version_conflict', `Run '${runId}' is driven by another runtime (${row.owner})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Drives a run a worker's poll claimed; a run that cannot be driven is reported (its lease lapses). */
  async function adopt(claim: Claim): Promise<void> {
    if (closed) return;
    const already = live.get(claim.id);
    if (already) {
      // Its lease had lapsed and this runtime took it back: the claim is the driver's now.
      already.driver.reclaimed(claim.epoch);
      return;
    }
    try {
      const row = await store.getRun(claim.id);
      if (!row) return;
      const problem = checkRunRow(row) ?? machineMismatch(row) ?? agentMismatchOf(row, agent);
      if (problem) {
        reportRun(claim.id, problem);
        return;
      }
      await resumeOnce(row, claim.epoch);
    } catch (error) {
      reportRun(claim.id, toFailure(error));
    }
  }

  const { evict, lose, handOff, cancelAsked } = createLetGo({
    live,
    store,
    hub,
    owner,
    isClosed: () => closed,
    parked: (at) => scheduler.consider(at),
  });

  return {
    driverDeps,
    adopt,
    lose,
    cancelAsked,
    handOff,
    /** The ids of the runs driven here now (the ones whose leases the heartbeat renews). */
    liveIds(): string[] {
      return [...live.keys()];
    },
    /** Another process made runs due (a decision, a hand-off): look at once. */
    pokeWake(): void {
      scheduler.poke();
    },
    /** Timers held for waiting runs: the scheduler's one, whatever their number. */
    get wakeTimers(): number {
      return scheduler.timers;
    },
    /** The live run, if this runtime drives it. */
    get(runId: string): LiveRun | undefined {
      return live.get(runId);
    },
    has(runId: string): boolean {
      return live.has(runId);
    },
    get size(): number {
      return live.size;
    },
    /** Registers a new run's driver (the run's row is committed). */
    register,
    /** The live run, loading it if it is persisted, not terminal and not driven elsewhere. */
    load,
    peek,
    /**
     * Resumes the runs in flight (pending, planning, executing) that no live runtime drives and
     * returns their ids; arms the wake-ups of the waiting ones, which stay in the file, and
     * checks their rows in the background.
     */
    async recover(): Promise<string[]> {
      const resumed: string[] = [];
      // A row with a status no state has is reported, not skipped.
      for (const id of await store.runIdsWithStatusNotIn(RUN_STATUSES)) {
        const row = await store.getRun(id);
        if (row) reportRun(id, checkRunRow(row)!);
      }
      scheduler.start();
      void sweepWaitingRows(store, {
        batch: SWEEP_BATCH,
        isClosed: () => closed,
        check: (row) => checkRunRow(row) ?? machineMismatch(row),
        report: (id, problem) => reportRun(id, problem),
      }).catch((error: unknown) => report(toFailure(error), { activity: 'checking the rows of waiting runs' }));
      // Runs in flight of an agent no live process has: reported (a batch), never adopted here.
      for (const orphan of await store.orphansOfOtherAgents(agent.name, RECOVER_BATCH)) {
        reportRun(orphan.id, agentMismatchOf(orphan, agent)!);
      }
      if (store.dialect === 'postgres') {
        // Shared by many workers: claim what no one holds (a batch; the claim loop takes the rest)
        // instead of trying every run in flight.
        const claims = await store.claimRuns(owner, leaseMs, RECOVER_BATCH, agent.name);
        // A process of this host that is gone (a restart after a crash) need not wait for its leases.
        for (const dead of (await store.inFlightOwners()).filter((o) => o !== owner && isDeadOwner(o))) {
          claims.push(...(await store.claimRunsOf(dead, owner, leaseMs, RECOVER_BATCH, agent.name)));
        }
        await Promise.all(claims.map(adopt));
        return claims.map((claim) => claim.id).filter((id) => live.has(id));
      }
      const all = await store.inFlightRunIds();
      // Driven here already (this runtime's claim loop took them meanwhile): resumed all the same.
      for (const id of all) if (live.has(id) || loading.has(id)) resumed.push(id);
      const inFlight = all.filter((id) => !live.has(id) && !loading.has(id));
      // The first batch now; the rest a batch a turn, so a large backlog never holds the loop long.
      const first = inFlight.slice(0, RECOVER_BATCH);
      const done = await Promise.all(first.map(recoverOne));
      first.forEach((id, i) => done[i] && resumed.push(id));
      const later = inFlight.slice(RECOVER_BATCH);
      if (later.length > 0) void recoverLater(later);
      return [...resumed, ...later];
    },
    recoveryFailures: recoveryFailures as ReadonlyMap<string, Failure>,
    /** Runs picked up again after a failed commit (a full disk), oldest first, until a commit of theirs lands. */
    stalledRuns: stalls.stalledRuns,
    /** An operator ended a quarantined run: it is no longer reported. */
    forget(runId: string): void {
      recoveryFailures.delete(runId);
    },
    /** A run as reported, with the reason it is quarantined when recovery found its row damaged. */
    withQuarantine(run: Run): Run {
      const damage = recoveryFailures.get(run.id);
      return damage?.code === 'store.corrupt_row' && !TERMINAL.has(run.status) ? { ...run, failure: damage } : run;
    },
    /** Stops every driver, as if the process had died here (nothing more is written). */
    close(): void {
      closed = true;
      scheduler.stop();
      stalls.close();
      for (const run of live.values()) run.driver.stop();
      live.clear();
    },
  };
}

export type RunRegistry = ReturnType<typeof createRunRegistry>;
