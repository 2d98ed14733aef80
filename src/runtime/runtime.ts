/**
 * `createRuntime`: the public API (the façade) over the machine, the store, the planner and the
 * tools. It checks the options, opens the database, wires the parts and answers each member of
 * `Runtime` by delegating: the wiring is `runtime-setup.ts`, start and close `runtime-lifecycle.ts`,
 * the runs as reported `registry/run-views.ts`, decisions `registry/decisions.ts`, cancel and send
 * `registry/run-commands.ts`, prunes `retention/pruning.ts`; which runs are live is the registry's
 * (`run-registry.ts`), how runtimes sharing a database divide them the leases' and claims'
 * (`sharing.ts`). Invariants: a run is acknowledged only once its row and `run.created` event are
 * committed; runs in flight are resumed on open; a run is driven by one runtime at a time.
 */
import { watchQueuedHere } from './registry/queued-here.js';
import type { RunStatus } from '../../machines/types.js';
import { DEFAULTS } from '../defaults.js';
import { fail, type Failure } from '../failure.js';
import { openStore } from '../store/index.js';
import { admitStart } from './drive/yield-turn.js';
import { newOwner } from './drive/leases.js';
import { describeTools } from './ledger/tool-registry.js';
import { createEventHub } from './model/event-hub.js';
import type {
  ForkRequest,
  MemoryRequest,
  MemorySnapshot,
  RerunFilter,
  RerunReport,
  Run,
  RunEventRecord,
  StartRequest,
} from './model/types.js';
import { forkRun } from './registry/fork-run.js';
import { rerunRuns } from './registry/rerun.js';
import { createRunReads } from './read/run-reads.js';
import { readMemorySnapshot } from './read/memory-read.js';
import { createDecisions } from './registry/decisions.js';
import { createRunCommands } from './registry/run-commands.js';
import { createPauseCommands } from './registry/pause-commands.js';
import { createRunViews } from './read/run-views.js';
import { startRun } from './registry/start-run.js';
import { createPruning } from './retention/pruning.js';
import { registerStore } from './internals.js';
import type { Runtime, RuntimeOptions } from './runtime-api.js';
import { closeRuntime, healthOf, startUp, statsOf } from './runtime-lifecycle.js';
import { checkOptions, wireRuns, wireSchedules } from './runtime-setup.js';

export type { Runtime, RuntimeOptions } from './runtime-api.js';

/**
 * Creates a runtime on a SQLite file or a PostgreSQL database and resumes the runs left unfinished.
 * @example
 * const runtime = createRuntime({ database: './baton.db', planner, tools: [echo] });
 * const run = await runtime.start({ input: 'say hi' });
 * console.log((await runtime.wait(run.id)).answer);
 * await runtime.close();
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const checked = checkOptions(options);
  const { definition, tools, agent } = checked;
  const opening = openStore(options.database);
  const { store, sqlite, opened } = opening;
  const leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
  const drive = options.drive !== false;
  const hub = createEventHub();
  const owner = newOwner();
  const { env, registry, tracer, children } = wireRuns(options, { ...checked, store, hub, owner, leaseMs });
  let closed = false;
  const isClosed = () => closed;
  const assertOpen = (): void => {
    if (closed) fail('run.closed', 'The runtime is closed');
  };
  // Callers blocked in wait() or events() are released when the runtime closes.
  const onClose = new Set<() => void>();
  // The queued runs started here, driven here once it is their turn (by a runtime that drives
  // but does not claim: the command line's; a claiming one gets them from its claim loop).
  const queued = watchQueuedHere(options, { store, owner, leaseMs, registry, isClosed, onClose });

  /** An API-only runtime lets a worker drive a run it acted on, once its own writes are durable. */
  async function handOffUnlessDriving(runId: string): Promise<void> {
    if (!drive) await registry.handOff(runId);
  }
  // What the parts below take from the runtime; each names what it needs of it.
  const shared = {
    store,
    hub,
    registry,
    env,
    owner,
    leaseMs,
    drive,
    opened,
    onClose,
    isClosed,
    assertOpen,
    handOffUnlessDriving,
    get: (runId: string) => runtime.get(runId),
  };
  const views = createRunViews(shared);
  const reads = createRunReads({ ...shared, tools, agent: agent.name });
  const decisions = createDecisions(shared);
  const commands = createRunCommands({ ...shared, endChildren: (runId) => children.endChildrenOf(runId) });
  /** What starting a run (or a fork) takes besides the shared parts. */
  const creating = () => ({
    definition,
    defaults: options.defaults,
    agent,
    cancel: commands.cancel,
    queued,
    runsPerTenant: options.limits?.runsPerTenant,
  });
  const pausing = createPauseCommands({ ...shared, decide: decisions.decide });
  const scheduling = wireSchedules(options, { store, agent, assertOpen }, () => runtime);
  // A run that ends takes its children with it: they are cancelled like any run.
  children.useCancel((runId, opts) => commands.cancel(runId, opts));
  const pruning = createPruning({ ...shared, retention: options.retention });

  const runtime: Runtime = {
    /** Creates a run, commits it, and starts it; resolves once the run is durable. */
    async start(request: StartRequest): Promise<Run> {
      assertOpen();
      // A burst of starts is let through a batch a turn, so none holds the event loop long.
      await admitStart();
      assertOpen();
      return startRun({ ...shared, ...creating() }, request);
    },
    fork(runId: string, request: ForkRequest): Promise<Run> {
      assertOpen();
      return forkRun({ ...shared, ...creating() }, runId, request);
    },
    async forks(runId: string, opts: { limit?: number } = {}): Promise<Run[]> {
      assertOpen();
      return (await views.list({ forkedFrom: runId, limit: opts.limit ?? 100 })).runs;
    },
    rerun(filter: RerunFilter = {}): Promise<RerunReport> {
      assertOpen();
      return rerunRuns({ store, agent: agent.name, fork: (runId, request) => runtime.fork(runId, request) }, filter);
    },
    ...views,
    ...reads,
    memory(request?: MemoryRequest): Promise<MemorySnapshot> {
      assertOpen();
      return readMemorySnapshot(store, request);
    },

    /** Listens to the committed events of every run (and live drafts); returns the unsubscribe function. */
    watch(listener: (event: RunEventRecord) => void): () => void {
      return hub.subscribe(null, listener);
    },
    ...decisions,
    ...commands,
    ...pausing,

    async recover(): Promise<string[]> {
      assertOpen();
      // A runtime that drives no runs resumes none.
      if (!drive) return [];
      return registry.recover();
    },

    /** Runs that `recover()` found but could not resume, with why; they are left untouched. */
    get recoveryFailures(): ReadonlyMap<string, Failure> {
      return registry.recoveryFailures;
    },

    /** Deletes finished runs that finished before an instant, in bounded batches; only finished runs, ever. */
    prune: pruning.prune,
    ...scheduling.commands,

    tools: () => describeTools(options.tools),

    health: () => healthOf(registry, store),
    stats: () => statsOf(registry, store, started),

    /** The machine this runtime drives its runs with (Baton's, or the variant it was given). */
    machine: definition,
    agent: { name: agent.name, toolsFingerprint: agent.tools },
    owner,
    get ready(): Promise<void> {
      return started.ready;
    },

    /** Stops every run (in-flight tools are aborted) and closes the file; runs resume on the next open. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await closeRuntime({ ...shared, opening, sharing: started, pruning, tracer, onError: options.onError });
    },
  };
  if (sqlite) registerStore(runtime, sqlite);
  const started = startUp(options, {
    ...shared,
    opening,
    agents: agent.set,
    scheduling,
    recover: () => runtime.recover(),
  });
  return runtime;
}

export type { RunStatus };
