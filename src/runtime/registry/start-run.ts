/**
 * Starting a run: its row and `run.created` event committed in one unit, the idempotency key and
 * the session's one active run checked first and enforced by unique indexes (a run inserted in
 * between fails the unit, and what took the key or the session is read again). Invariant: a run
 * is acknowledged only once its row is durable; an API-only runtime leaves it unclaimed.
 */
import type { RunMachineDefinition } from '../../../machines/variants.js';
import type { AgentIdentity } from './agent-identity.js';
import { fail, quoteId } from '../../failure.js';
import { isUniqueViolation, type RunRow, type Store } from '../../store/index.js';
import { failpoint } from '../model/failpoints.js';
import {
  findCollision,
  planNewRun,
  requestDifferences,
  stageCreation,
  toNewRow,
  type Creation,
  type NewRun,
} from './new-run.js';
import { assertInterruptTerms, commitQueued, interruptActive, queuedRow } from './session-queue.js';
import { createDriver, type RunDriver } from '../drive/run-driver.js';
import type { RunRegistry } from './run-registry.js';
import { toRun } from '../model/rows.js';
import type { Run, RunDefaults, StartRequest } from '../model/types.js';

/** What starting a run needs from its runtime. */
export interface StartContext {
  store: Store;
  registry: RunRegistry;
  owner: string;
  definition: RunMachineDefinition;
  leaseMs: number;
  /** False for an API-only runtime: the run is recorded for a worker to claim. */
  drive: boolean;
  defaults: RunDefaults | undefined;
  /** The runtime's agent: recorded on the run, which only runtimes of that agent drive. */
  agent: AgentIdentity;
  /** Cancels a run as `cancel()` does (the active run a start with `onBusy: 'interrupt'` ends). */
  cancel(runId: string, opts: { reason?: string; compensate?: boolean }): Promise<unknown>;
  /** Told of a run this start queued: a runtime that drives runs drives it once it is its turn. */
  queued(runId: string): void;
  /** The most runs of one tenant in flight (`limits.runsPerTenant`): checked in the unit that inserts a run. */
  runsPerTenant?: number | undefined;
}

/**
 * Commits a queued or delayed run (`commit`), then stops its driver (the run is driven once it is
 * its turn); the run its idempotency key names when the key was taken meanwhile (the same request
 * again answers its run), else null.
 */
async function commitUnlessTaken(
  ctx: StartContext,
  run: NewRun,
  row: RunRow,
  driver: RunDriver,
  commit: () => Promise<void>,
): Promise<Run | null> {
  try {
    await commit();
    return null;
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const taken = await findCollision(ctx.store, run, row.idempotency_key);
    if (taken?.kind !== 'existing') throw error;
    return toRun(taken.row);
  } finally {
    driver.stop();
  }
}

/**
 * A run whose session is busy, kept in the session's queue (`onBusy: 'enqueue' | 'interrupt'`);
 * one that interrupts cancels the active run first, and goes next when it has ended.
 */
async function startQueued(ctx: StartContext, run: NewRun, row: RunRow, activeRunId: string | null): Promise<Run> {
  const interrupts = run.request.onBusy === 'interrupt';
  // A fresh driver: the one the first attempt staged on is done with.
  const driver = createDriver(ctx.registry.driverDeps, run.runId, {
    kind: 'new',
    input: { runId: run.runId, limits: run.limits, deadlineAt: run.deadlineAt },
  });
  const taken = await commitUnlessTaken(ctx, run, row, driver, () =>
    commitQueued(driver, run, queuedRow(row, interrupts), activeRunId),
  );
  if (taken) return taken;
  failpoint('run.created');
  ctx.queued(run.runId);
  if (interrupts) {
    // A driver that retired meanwhile has nothing left to land.
    const landed = async (id: string) =>
      ctx.registry
        .get(id)
        ?.driver.flush()
        .catch(() => undefined);
    await interruptActive(ctx.cancel, landed, activeRunId, run.request.interrupt ?? {});
  }
  return toRun((await ctx.store.getRun(run.runId)) ?? row);
}

/**
 * A run started later (`startAt`): stored now, `queued` in a session of its own with its instant as
 * `wake_at`, so a claiming runtime's sweep (`moveOrphanQueues`, at that instant by the scheduler)
 * makes it `pending` once it is due, and any claiming runtime starts it.
 */
async function startDelayed(ctx: StartContext, run: NewRun, row: RunRow, driver: RunDriver): Promise<Run> {
  const delayed: RunRow = { ...queuedRow(row, false), wake_at: run.startAt };
  stageCreation(driver, run, delayed, { start_at: run.startAt });
  const taken = await commitUnlessTaken(ctx, run, row, driver, () => driver.flush());
  if (taken) return taken;
  failpoint('run.created');
  ctx.queued(run.runId);
  return toRun(delayed);
}

/** Creates, commits and (when this runtime drives runs) starts a run. */
export async function startRun(ctx: StartContext, request: StartRequest): Promise<Run> {
  const { store, registry, owner, definition, leaseMs, drive } = ctx;
  const run = planNewRun(request, ctx.defaults);
  assertInterruptTerms(run.request.onBusy, run.request.interrupt);
  const driver = createDriver(registry.driverDeps, run.runId, {
    kind: 'new',
    input: { runId: run.runId, limits: run.limits, deadlineAt: run.deadlineAt },
  });
  const row = toNewRow(run, JSON.stringify(driver.actor.getPersistedSnapshot()), owner, definition, leaseMs, ctx.agent);
  // An API-only runtime records the run unclaimed: a worker claims it and starts it.
  if (!drive) Object.assign(row, { owner: null, lease_until: null });
  // What the key or the session already holds is read first; a unique index catches the
  // rest (a run inserted in between), and then it is read again.
  let result: Creation | null = await findCollision(store, run, row.idempotency_key);
  if (!result && run.startAt !== null) return startDelayed(ctx, run, row, driver);
  if (!result) {
    stageCreation(driver, run, row);
    const cap = ctx.runsPerTenant;
    if (cap !== undefined) driver.stage((writer) => writer.capTenant(row.tenant_id, cap));
    try {
      await driver.flush();
      result = { kind: 'created' };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      result = (await findCollision(store, run, row.idempotency_key)) ?? { kind: 'busy', runId: null };
    }
  }
  if (result.kind === 'existing') {
    // The same key is the same request: a different one is a client's mistake, not a retry.
    const differences = requestDifferences(result.row, run);
    if (differences.length > 0) {
      fail(
        'idempotency.mismatch',
        `Idempotency key ${quoteId(run.request.options?.idempotencyKey ?? '')} belongs to run '${result.row.id}', started with another ${differences.join(', ')}`,
        { details: { run_id: result.row.id, differences } },
      );
    }
    return toRun(result.row);
  }
  if (result.kind === 'busy') {
    const onBusy = run.request.onBusy ?? 'reject';
    if (onBusy === 'reject') {
      const active = result.runId ? ` '${result.runId}'` : '';
      fail('session.busy', `Session ${quoteId(run.clientSessionId)} already has an active run${active}`, {
        details: { session_id: run.clientSessionId, active_run_id: result.runId },
      });
    }
    return startQueued(ctx, run, row, result.runId);
  }
  failpoint('run.created');
  if (!drive) return toRun(row);
  registry.register(row, driver);
  driver.start();
  driver.actor.send({ type: 'start' });
  return toRun(row);
}
