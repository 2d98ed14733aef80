/**
 * The run registry: which runs this runtime drives, and how a persisted run becomes a live one.
 * Every way in goes through one restore (`restore-run.ts`): a load on demand (`load-run.ts`: a
 * decision, a cancel, an event, a wake-up), recovery on open (`recovery-sweep.ts`), a worker's
 * claim or a retry after a failed commit (`adopt-run.ts`). Runs that cannot be driven here are
 * reported (`recovery-failures.ts`); a run durably waiting for a human leaves memory, no actor,
 * no timer (`let-go.ts`), and the wake scheduler loads it at its deadline.
 * Invariants: a run is driven only after its lease is claimed; at most one live driver per run
 * (`live-runs.ts`); a run that cannot be resumed is reported in `recoveryFailures` and left
 * untouched, and stops no other run; opening costs what is in flight, not what waits.
 */
import type { SnapshotFrom } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import type { RunMachineDefinition } from '../../../machines/variants.js';
import type { Failure } from '../../failure.js';
import type { Claim, HeldRun, RunRow, Store } from '../../store/index.js';
import type { LiveRun } from '../drive/env.js';
import { TERMINAL } from '../drive/snapshot-saver.js';
import { openBudgetWait, openPauseWait } from '../steps/human-waits.js';
import type { DriverDeps, RunDriver } from '../drive/run-driver.js';
import type { EventHub } from '../model/event-hub.js';
import type { Run } from '../model/types.js';
import { createAdoption } from './adopt-run.js';
import type { AgentIdentity } from './agent-identity.js';
import { stageAnswer } from './commit-answer.js';
import { cancelRequest } from './cancel-request.js';
import { createLetGo } from './let-go.js';
import { createLiveRuns } from './live-runs.js';
import { createLoader } from './load-run.js';
import { createRecoveryFailures } from './recovery-failures.js';
import { createRecovery } from './recovery-sweep.js';
import { createRestore } from './restore-run.js';
import { createStallRetry, type StalledRun } from './stall-retry.js';
import { createWakeScheduler } from './wake-scheduler.js';

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
  /** Applies the expiry of a wait whose instant has passed (found when the run is loaded). */
  expire?: (run: LiveRun, approvalId: string) => Promise<void>;
  /** Polls the work a run's call left running elsewhere, once its poll is due (`steps/task-wait.ts`). */
  checkTask?: (run: LiveRun, approvalId: string) => void;
  /** A child run driven here ended, durably: its parent takes the outcome (`child-runs.ts`). */
  childEnded?: (child: LiveRun & { parent: NonNullable<LiveRun['parent']> }) => void;
  /** A run waits on a child (it came to wait, or was loaded waiting): taken now if the child has ended. */
  waitsOnChild?: (parent: LiveRun) => void;
  /** A run driven here ended, durably: its children still active end with it. */
  runEnded?: (run: LiveRun) => void;
  /** A child run was loaded here: if its parent has ended, it ends too. */
  childLoaded?: (child: LiveRun) => void;
}

/** Where a background error happened, for the runtime's `onError`. */
export interface BackgroundErrorContext {
  /** What the runtime was doing: resuming a run after a failed commit, waking a waiting run, recovering on open… */
  activity: string;
  runId?: string;
}

export type { StalledRun } from './stall-retry.js';

/** The runs one runtime drives, and every way a persisted run becomes one of them. */
export interface RunRegistry {
  /** The settings every driver of this runtime is created with, a new run's included. */
  readonly driverDeps: DriverDeps;
  /** Drives a run a worker's poll claimed; a run that cannot be driven is reported (its lease lapses). */
  adopt(claim: Claim): Promise<void>;
  /** Runs whose lease this runtime lost (another worker claimed them): stopped here at once, their calls aborted. */
  lose(ids: readonly string[]): void;
  /** Carries out what another runtime asked of a run driven here (a cancel, a pause), as its row says. */
  asked(run: HeldRun): void;
  /** Lets a worker drive a run this runtime only acted on: once what is buffered is durable, its lease is released. */
  handOff(runId: string): Promise<void>;
  /** The ids of the runs driven here now (the ones whose leases the heartbeat renews). */
  liveIds(): string[];
  /** Another process made runs due (a decision, a hand-off): look at once. */
  pokeWake(): void;
  /** Timers held for waiting runs: the scheduler's one, whatever their number. */
  readonly wakeTimers: number;
  /** The live run, if this runtime drives it. */
  get(runId: string): LiveRun | undefined;
  /** True when this runtime drives the run now. */
  has(runId: string): boolean;
  /** How many runs this runtime drives now. */
  readonly size: number;
  /** Registers a new run's driver (the run's row is committed). */
  register(row: RunRow, driver: RunDriver): LiveRun;
  /** The live run, loading it if it is persisted, not terminal and not driven elsewhere. */
  load(runId: string, eventType: string): Promise<LiveRun>;
  /** The state of a run in the file and not live here, without loading it; undefined for a live run. */
  peek(runId: string, eventType: string): Promise<SnapshotFrom<RunMachine> | undefined>;
  /**
   * Resumes the runs in flight (pending, planning, executing) that no live runtime drives and
   * returns their ids; arms the wake-ups of the waiting ones, which stay in the file, and
   * checks their rows in the background.
   */
  recover(): Promise<string[]>;
  /** The runs that cannot be driven here, and why. */
  readonly recoveryFailures: ReadonlyMap<string, Failure>;
  /** Runs picked up again after a failed commit (a full disk), oldest first, until a commit of theirs lands. */
  stalledRuns(): StalledRun[];
  /** An operator ended a quarantined run: it is no longer reported. */
  forget(runId: string): void;
  /** A run as reported, with the reason it is quarantined when recovery found its row damaged. */
  withQuarantine(run: Run): Run;
  /** Stops every driver, as if the process had died here (nothing more is written). */
  close(): void;
}

/** Creates the registry of one runtime. */
export function createRunRegistry(deps: RegistryDeps): RunRegistry {
  const { store, hub, owner, definition, leaseMs, agent } = deps;
  const table = createLiveRuns();
  const live = table.runs;
  const reports = createRecoveryFailures();
  const report = (failure: Failure, where: BackgroundErrorContext): void => {
    try {
      deps.onError?.(failure, where);
    } catch {
      // A logger that throws must not stop the runtime.
    }
  };
  let closed = false;
  const isClosed = (): boolean => closed;

  const driverDeps = withRegistryCallbacks(deps, live, {
    failed: (runId, failure) => (closed ? stalls.clear(runId) : stalls.readopt(runId, failure)),
    settled: (runId) => stalls.clear(runId),
    idle: (driver) => {
      const run = live.get(driver.runId);
      if (run?.driver === driver && driver.context().waitReason === 'child') deps.waitsOnChild?.(run);
      letGo.evict(driver);
    },
  });

  const letGo = createLetGo({
    live,
    store,
    hub,
    owner,
    isClosed,
    parked: (at, runId, polled) => scheduler.consider(at, polled ? runId : undefined),
  });
  const restore = createRestore({
    store,
    owner,
    leaseMs,
    definition,
    driverDeps,
    table,
    isClosed,
    restored: (runId) => {
      reports.clear(runId);
      scheduler.loaded(runId);
    },
    asked: letGo.asked,
    ...(deps.expire ? { expire: deps.expire } : {}),
    ...(deps.checkTask ? { checkTask: deps.checkTask } : {}),
    ...(deps.waitsOnChild ? { waitsOnChild: deps.waitsOnChild } : {}),
    ...(deps.childLoaded ? { childLoaded: deps.childLoaded } : {}),
  });
  const loader = createLoader({ store, agent, definition, machine: driverDeps.machine, table, restore, reports });
  const adoption = createAdoption({ store, agent, definition, table, restore, reports, isClosed });

  // A failed commit loses only what was not durable: the run is picked up again from the file.
  const stalls = createStallRetry({
    isClosed,
    resume: adoption.resumeStalled,
    giveUp(runId, failure) {
      hub.fail(runId, failure);
      report(failure, { activity: 'resuming a run after a failed commit', runId });
    },
  });

  const scheduler = createWakeScheduler({
    store,
    wake: (runId) => loader.load(runId, 'wake').then(() => undefined),
    leaseMs,
    agents: agent.set,
    isLive: (runId) => live.has(runId),
    report: (runId, failure) => {
      reports.report(runId, failure);
      report(failure, { activity: 'waking a waiting run', runId });
    },
  });

  const recover = createRecovery({
    store,
    owner,
    leaseMs,
    agent,
    definition,
    table,
    restore,
    adopt: adoption.adopt,
    reports,
    armWakeUps: () => scheduler.start(),
    onError: (failure, activity) => report(failure, { activity }),
    isClosed,
  });

  return {
    driverDeps,
    adopt: adoption.adopt,
    lose: letGo.lose,
    asked: letGo.asked,
    handOff: letGo.handOff,
    liveIds: () => [...live.keys()],
    pokeWake: () => scheduler.poke(),
    get wakeTimers() {
      return scheduler.timers;
    },
    get: (runId) => live.get(runId),
    has: (runId) => live.has(runId),
    get size() {
      return live.size;
    },
    register: table.register,
    load: loader.load,
    peek: loader.peek,
    recover,
    recoveryFailures: reports.failures,
    stalledRuns: stalls.stalledRuns,
    forget: (runId) => reports.clear(runId),
    withQuarantine: reports.withQuarantine,
    close() {
      closed = true;
      scheduler.stop();
      stalls.close();
      for (const run of live.values()) run.driver.stop();
      live.clear();
    },
  };
}

/** What the registry does when one of its drivers retires or goes idle. */
interface DriverOutcomes {
  /** A registered driver broke (a failed commit). */
  failed(runId: string, failure: Failure): void;
  /** A registered driver retired cleanly (its run ended, or it was stopped). */
  settled(runId: string): void;
  /** A driver's run is durably waiting for a human with nothing left to write. */
  idle(driver: RunDriver): void;
}

/** The runtime's driver settings with the registry's callbacks: the answer staged, the table kept. */
function withRegistryCallbacks(deps: RegistryDeps, live: Map<string, LiveRun>, on: DriverOutcomes): DriverDeps {
  return {
    ...deps.driver,
    owner: deps.owner,
    onSucceeded(driver) {
      const run = live.get(driver.runId);
      if (run) stageAnswer(driver, run);
    },
    onEnded(driver) {
      // A child's end makes its parent due in the same unit: a crash before the parent takes the
      // outcome leaves it woken on open, wherever it is driven.
      const parent = live.get(driver.runId)?.parent;
      if (parent) driver.stage((writer) => writer.setWakeAt(parent.runId, 0));
      // And a parent's end asks its children still active to end, in the same unit: whoever drives
      // one carries it out, and a waiting one is due, so no crash leaves a child of an ended run.
      const children = driver.memory.toolCalls().filter((row) => row.child_run_id !== null);
      if (children.length === 0) return;
      const why = driver.context().stopReason;
      const request = cancelRequest(`its parent run '${driver.runId}' ended${why ? ` (${why})` : ''}`);
      driver.stage((writer) => {
        for (const row of children) writer.askCancel(row.child_run_id!, request);
      });
    },
    onRetired(driver, failure) {
      // A driver never registered (a new run whose insert failed) is its caller's to report.
      const run = live.get(driver.runId);
      if (run?.driver !== driver) return;
      live.delete(driver.runId);
      if (failure) on.failed(driver.runId, failure);
      else on.settled(driver.runId);
      if (failure || !TERMINAL.has(driver.status)) return;
      if (run.parent) deps.childEnded?.({ ...run, parent: run.parent });
      deps.runEnded?.(run);
    },
    onRunWait(driver) {
      if (driver.context().waitReason === 'paused') openPauseWait(driver);
      else openBudgetWait(driver, live.get(driver.runId)?.waits);
    },
    onIdleWaiting(driver) {
      // On the next turn: whatever applies a decision to this run does so first.
      setImmediate(() => on.idle(driver));
    },
  };
}
