/**
 * `createRuntime`: the public API (the façade) over the machine, the store, the planner and the
 * tools. It checks the machine, opens the database, wires the actors, and answers each member of
 * `Runtime`; which runs are live is the registry's (`run-registry.ts`), how runtimes sharing a
 * database divide them the leases' and claims' (`sharing.ts`). Invariants: a run is acknowledged
 * only once its row and `run.created` event are committed; runs in flight are resumed on open; a
 * run is driven by one runtime at a time.
 */
import type { SnapshotFrom } from 'xstate';
import type { RunMachine } from '../../machines/run-machine.js';
import { runEventSchema } from '../../machines/events.js';
import { stateName } from '../../machines/run-status.js';
import { batonRunMachine, checkRunMachine } from '../../machines/variants.js';
import { TERMINAL_STATUSES, type RunEvent, type RunStatus } from '../../machines/types.js';
import { DEFAULTS } from '../defaults.js';
import { BatonError, fail, quoteId, toFailure, type Failure } from '../failure.js';
import type { RunFilter } from '../store/index.js';
import { openStore } from '../store/open-store.js';
import { assertPendingApproval, decideApproval, type DecisionInput } from './ledger/approvals.js';
import type { LiveRun, RuntimeEnv } from './drive/env.js';
import { createEventHub } from './model/event-hub.js';
import { createExecutorActor } from './steps/executor-actor.js';
import { deadlineActor, timerActor } from './steps/deadline-actor.js';
import { followEvents, waitForRun, type FollowContext, type FollowOptions } from './read/follow.js';
import { startRun } from './registry/start-run.js';
import { checkRunRow, endQuarantinedRun } from './drive/quarantine.js';
import { scopeKey } from './model/tenant-keys.js';
import { newOwner, retireOwner } from './drive/leases.js';
import { createPlannerActor } from './steps/planner-actor.js';
import { checkListFilter, toApproval, toRun } from './model/rows.js';
import { createRunReads } from './read/run-reads.js';
import type { Runtime, RuntimeHealth, RuntimeOptions, RuntimeStats } from './runtime-api.js';
import { registerStore } from './internals.js';
import { admitStart } from './drive/yield-turn.js';
import { createRunRegistry } from './registry/run-registry.js';
import { startSharing, type Sharing } from './sharing/sharing.js';
import { prune, scheduleRetention, type PruneOptions, type PruneReport } from './retention/prune.js';
import { createRunTracer } from './observe/otel.js';
import { agentIdentity } from './registry/agent-identity.js';
import { assertWellFormed } from './model/well-formed.js';
import { assertSupportedZod } from './ledger/supported-zod.js';
import { refuseUnearnedSuccess } from './drive/terminal-rule.js';
import { cancelElsewhere } from './registry/cancel-request.js';
import { describeTools, plannerTools } from './ledger/tool-registry.js';
import type { Approval, Run, RunEventRecord, StartRequest, UncertainResolution } from './model/types.js';

export type { Runtime, RuntimeOptions } from './runtime-api.js';

/** Not finished: an active status, or one no state has (a damaged row). */
const ACTIVE_OR_UNKNOWN = (status: string): boolean => !(TERMINAL_STATUSES as readonly string[]).includes(status);

/**
 * Creates a runtime on a SQLite file or a PostgreSQL database and resumes the runs left unfinished.
 * @example
 * const runtime = createRuntime({ database: './baton.db', planner, tools: [echo] });
 * const run = await runtime.start({ input: 'say hi' });
 * console.log((await runtime.wait(run.id)).answer);
 * await runtime.close();
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  assertSupportedZod();
  const definition = options.machine ?? batonRunMachine;
  const problems = checkRunMachine(definition);
  if (problems.length > 0) {
    fail(
      'machine.incompatible',
      `The run machine${typeof definition.name === 'string' ? ` '${definition.name}'` : ''} cannot be driven: ${problems.join('; ')}`,
      { details: { machine: definition.name, problems } },
    );
  }
  const tools = new Map(options.tools.map((t) => [t.name, t]));
  if (tools.size !== options.tools.length) fail('input.invalid', 'Two tools share a name');
  if (options.agent !== undefined && !/^[a-z][a-z0-9-]{0,63}$/.test(options.agent)) {
    fail('input.invalid', `Agent name '${options.agent}' must match /^[a-z][a-z0-9-]{0,63}$/`);
  }
  const agent = agentIdentity(options.agent, options.tools);
  const { store, sqlite, opened } = openStore(options.database);
  const leaseMs = options.leaseMs ?? DEFAULTS.leaseMs;
  const drive = options.drive !== false;
  const hub = createEventHub();
  const owner = newOwner();
  let closed = false;
  // Callers blocked in wait() or events() are released when the runtime closes.
  const onClose = new Set<() => void>();

  const env: RuntimeEnv = {
    store,
    planner: options.planner,
    tools,
    toolSpecs: plannerTools(options.tools),
    policy: options.policy,
    hooks: options.hooks,
    contextTokens: options.contextTokens ?? DEFAULTS.contextTokens,
    live(runId) {
      const run = registry.get(runId);
      if (!run) fail('run.closed', `Run '${runId}' is not driven by this runtime`);
      return run;
    },
  };
  // Checked above: a variant keeps the states, actors, events and context the runtime uses.
  const machine = definition.machine.provide({
    actors: {
      planner: createPlannerActor(env),
      executor: createExecutorActor(env),
      deadline: deadlineActor,
      timer: timerActor,
    },
  }) as RunMachine;
  // Spans of the runs driven here, from what they commit (no-ops unless the application registered a tracer provider).
  const tracer =
    options.tracing === false ? null : createRunTracer(store, options.tracing === true ? {} : (options.tracing ?? {}));
  const registry = createRunRegistry({
    store,
    hub,
    owner,
    leaseMs,
    definition,
    agent,
    driver: {
      store,
      hub,
      machine,
      machineVersion: definition.version,
      inspect: options.inspect,
      ...(tracer ? { onCommitted: tracer.committed } : {}),
    },
    ...(options.onError ? { onError: options.onError } : {}),
  });

  /** A run's row, or `run.not_found`. */
  async function rowOf(runId: string) {
    const row = await store.getRun(runId);
    if (!row) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
    return row;
  }

  const reads = createRunReads({ store, tools, agent: agent.name, get: (runId) => runtime.get(runId) });

  const follow: FollowContext = {
    store,
    hub,
    liveStatus: (runId) => registry.get(runId)?.driver.status,
    isClosed: () => closed,
    onClose,
  };

  // Leases renewed, runs claimed, notifications heard: from the moment the database is open.
  let sharing: Sharing = { stop: () => undefined, claimRounds: 0 };
  // Prunes under way stop between batches when the runtime closes, before the store does.
  const closing = new AbortController();
  const prunes = new Set<Promise<unknown>>();
  function pruneNow(pruneOptions: PruneOptions): Promise<PruneReport> {
    assertOpen();
    const signal = pruneOptions.signal ? AbortSignal.any([pruneOptions.signal, closing.signal]) : closing.signal;
    const done = opened.then(() => prune(store, { ...pruneOptions, signal }));
    prunes.add(done);
    void done.catch(() => undefined).finally(() => prunes.delete(done));
    return done;
  }
  const stopRetention = options.retention ? scheduleRetention(pruneNow, options.retention) : async () => undefined;

  /** An API-only runtime lets a worker drive a run it acted on, once its own writes are durable. */
  async function handOffUnlessDriving(runId: string): Promise<void> {
    if (!drive) await registry.handOff(runId);
  }

  /**
   * Applies a decision on a run's approval: the run is loaded here (claimed), the decision
   * committed, and an API-only runtime then hands the run to a worker to act on it.
   */
  async function decide(runId: string, approvalId: string, input: DecisionInput): Promise<Approval> {
    const run = await registry.load(runId, input.approve ? 'approved' : 'rejected');
    const row = await decideApproval(env, run, approvalId, input, { apply: drive });
    await handOffUnlessDriving(runId);
    return toApproval(row);
  }

  function assertOpen(): void {
    if (closed) fail('run.closed', 'The runtime is closed');
  }

  /** Refuses an event the run's state does not take, naming both. */
  function refuseUntaken(runId: string, snapshot: SnapshotFrom<RunMachine>, event: RunEvent): void {
    if (snapshot.can(event)) return;
    fail(
      'run.invalid_transition',
      `Run '${runId}' in state '${stateName(snapshot.value)}' cannot take '${event.type}'`,
      {
        details: { state: snapshot.value, event: event.type },
      },
    );
  }

  function send(run: LiveRun, event: RunEvent): void {
    refuseUntaken(run.driver.runId, run.driver.actor.getSnapshot(), event);
    run.driver.actor.send(event);
  }

  const runtime: Runtime = {
    /** Creates a run, commits it, and starts it; resolves once the run is durable. */
    async start(request: StartRequest): Promise<Run> {
      assertOpen();
      // A burst of starts is let through a batch a turn, so none holds the event loop long.
      await admitStart();
      assertOpen();
      return startRun(
        { store, registry, owner, definition, leaseMs, drive, defaults: options.defaults, agent },
        request,
      );
    },

    /** The durable state of a run (a quarantined one carries its `store.corrupt_row` failure). */
    async get(runId: string): Promise<Run> {
      return registry.withQuarantine(toRun(await rowOf(runId)));
    },

    /** Runs, newest first, filtered by status and session; page with `cursor`. */
    async list(filter: RunFilter = {}): Promise<{ runs: Run[]; nextCursor: string | null }> {
      const limit = filter.limit ?? 50;
      checkListFilter(filter);
      // A session is named as its client names it, within the filter's tenant (the default one without).
      const sessionId = filter.sessionId === undefined ? undefined : scopeKey(filter.tenantId, filter.sessionId);
      const rows = await store.listRuns({ ...filter, sessionId, limit });
      const last = rows[rows.length - 1];
      return {
        runs: rows.map((row) => registry.withQuarantine(toRun(row))),
        nextCursor: rows.length === limit && last ? `${last.created_at}:${last.id}` : null,
      };
    },

    /** The committed events of a run after `after`, then live ones until the run ends (unless `follow: false`). */
    events(runId: string, opts: FollowOptions = {}): AsyncGenerator<RunEventRecord> {
      return followEvents(follow, runId, opts);
    },

    /** Resolves when the run is terminal or waiting for a human (durably); a quarantined run rejects. */
    async wait(runId: string): Promise<Run> {
      const row = registry.has(runId) ? undefined : await store.getRun(runId);
      const damage = row && ACTIVE_OR_UNKNOWN(row.status) ? checkRunRow(row) : null;
      if (damage) throw new BatonError(damage);
      return waitForRun(follow, runId);
    },

    ...reads,

    /** Listens to the committed events of every run (and live drafts); returns the unsubscribe function. */
    watch(listener: (event: RunEventRecord) => void): () => void {
      return hub.subscribe(null, listener);
    },

    /** Approves a pending approval (for an uncertain call, `resolution` says retry or record as done). */
    async approve(
      runId: string,
      approvalId: string,
      decision: { by: string; reason?: string; resolution?: UncertainResolution },
    ): Promise<Approval> {
      assertOpen();
      assertWellFormed(decision, 'The decision');
      const pending = await assertPendingApproval(store, runId, approvalId);
      if (decision.resolution !== undefined && pending.kind !== 'uncertain') {
        fail(
          'input.invalid',
          `Approval '${approvalId}' asks whether to run calls: 'resolution' applies only to an uncertain side effect`,
          { details: { resolution: decision.resolution } },
        );
      }
      return decide(runId, approvalId, {
        approve: true,
        by: decision.by,
        reason: decision.reason ?? null,
        resolution: decision.resolution,
      });
    },

    /** Rejects a pending approval: the model is told, or with `terminate` the run ends `rejected`. */
    async reject(
      runId: string,
      approvalId: string,
      decision: { by: string; reason?: string; terminate?: boolean; compensate?: boolean },
    ): Promise<Approval> {
      assertOpen();
      assertWellFormed(decision, 'The decision');
      await assertPendingApproval(store, runId, approvalId);
      return decide(runId, approvalId, {
        approve: false,
        by: decision.by,
        reason: decision.reason ?? null,
        terminate: decision.terminate,
        compensate: decision.compensate,
      });
    },

    /** Cancels a run; it ends `failed` with `cancelled` (after undoing its calls, with `compensate`); a running tool is aborted. */
    async cancel(runId: string, opts: { reason?: string; compensate?: boolean } = {}): Promise<Run> {
      assertOpen();
      assertWellFormed(opts, 'The cancel request');
      // A quarantined run cannot be loaded; an operator still ends it, from its row alone.
      const row = registry.has(runId) ? undefined : await store.getRun(runId);
      const damage = row && ACTIVE_OR_UNKNOWN(row.status) ? checkRunRow(row) : null;
      if (row && damage) {
        await endQuarantinedRun(store, hub, row, damage, opts.reason);
        registry.forget(runId);
        return runtime.get(runId);
      }
      let run: LiveRun;
      try {
        run = await registry.load(runId, 'cancel');
      } catch (error) {
        if (!(error instanceof BatonError) || error.code !== 'run.version_conflict') throw error;
        return cancelElsewhere(runId, opts, {
          store,
          leaseMs,
          get: (id) => runtime.get(id),
          isClosed: () => closed,
        });
      }
      send(run, {
        type: 'cancel',
        ...(opts.reason ? { reason: opts.reason } : {}),
        ...(opts.compensate ? { compensate: true } : {}),
      });
      // A cancel the database refused is the caller's to know: the run is as it was.
      await run.driver.flush();
      await handOffUnlessDriving(runId);
      return runtime.get(runId);
    },

    /**
     * Delivers a machine event to a run, as if one of its actors had produced it: for tools
     * and tests. An event the run's state does not take is refused with
     * `run.invalid_transition` and changes nothing.
     */
    async send(runId: string, event: unknown): Promise<Run> {
      assertOpen();
      const parsed = runEventSchema.safeParse(event);
      if (!parsed.success) fail('input.invalid', 'Invalid run event', { details: { issues: parsed.error.issues } });
      assertWellFormed(parsed.data, 'The event');
      // A run in the file is asked first: an event it does not take must not even load it.
      const stored = await registry.peek(runId, parsed.data.type);
      if (stored) refuseUntaken(runId, stored, parsed.data);
      const run = await registry.load(runId, parsed.data.type);
      // An actor's outcome sent from outside is held to what the actor itself checks.
      refuseUnearnedSuccess(run.driver, run.driver.actor.getSnapshot(), parsed.data);
      send(run, parsed.data);
      await run.driver.flush();
      await handOffUnlessDriving(runId);
      return runtime.get(runId);
    },

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
    prune: pruneNow,

    tools: () => describeTools(options.tools),

    health(): RuntimeHealth {
      const stalledRuns = registry.stalledRuns();
      const refused = store.writeFailure;
      const writeFailure =
        refused && Date.now() - refused.last < DEFAULTS.writeFailureHealthMs
          ? { failure: refused.failure, since: refused.since }
          : null;
      return { status: stalledRuns.length > 0 || writeFailure ? 'degraded' : 'ok', stalledRuns, writeFailure };
    },

    stats(): RuntimeStats {
      return {
        commits: store.commits,
        liveRuns: registry.size,
        wakeTimers: registry.wakeTimers,
        claimRounds: sharing.claimRounds,
      };
    },

    /** The machine this runtime drives its runs with (Baton's, or the variant it was given). */
    machine: definition,
    agent: { name: agent.name, toolsFingerprint: agent.tools },
    owner,
    get ready(): Promise<void> {
      return ready;
    },

    /** Stops every run (in-flight tools are aborted) and closes the file; runs resume on the next open. */
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      closing.abort();
      sharing.stop();
      await stopRetention();
      await Promise.allSettled([...prunes]);
      await tracer?.drain();
      registry.close();
      for (const release of onClose) release();
      onClose.clear();
      await Promise.resolve();
      sqlite?.queue.flushNow();
      // Leases not released (the database refuses writes) lapse by themselves; a database that
      // never opened holds none (its failure is the caller's already, from `ready`).
      if (
        await opened.then(
          () => true,
          () => false,
        )
      ) {
        await store
          .releaseLeases(owner)
          .catch((error: unknown) => options.onError?.(toFailure(error), { activity: 'releasing leases on close' }));
      }
      retireOwner(owner);
      await store.close();
    },
  };
  if (sqlite) registerStore(runtime, sqlite);
  const claim = drive && (options.claim ?? options.recover !== false);
  const ready: Promise<void> = opened.then(async () => {
    if (closed) return;
    if (drive && options.recover !== false) await runtime.recover();
    if (closed) return;
    sharing = startSharing({
      store,
      hub,
      registry,
      owner,
      leaseMs,
      claim,
      claimEveryMs: options.claimEveryMs ?? (store.dialect === 'postgres' ? 1_000 : leaseMs / 3),
      maxRuns: options.maxRuns ?? 1_000,
      agent: agent.name,
      onError: (failure, where) => options.onError?.(failure, where),
    });
  });
  // Whoever awaits `ready` sees a failure; nobody else has to.
  ready.catch(() => undefined);
  return runtime;
}

export type { RunStatus };
