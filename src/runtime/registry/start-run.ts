/**
 * Starting a run: its row and `run.created` event committed in one unit, the idempotency key and
 * the session's one active run checked first and enforced by unique indexes (a run inserted in
 * between fails the unit, and what took the key or the session is read again). Invariant: a run
 * is acknowledged only once its row is durable; an API-only runtime leaves it unclaimed.
 */
import type { RunMachineDefinition } from '../../../machines/variants.js';
import type { AgentIdentity } from './agent-identity.js';
import { fail, quoteId } from '../../failure.js';
import { isUniqueViolation, type Store } from '../../store/index.js';
import { failpoint } from '../model/failpoints.js';
import { findCollision, planNewRun, requestDifferences, stageCreation, toNewRow, type Creation } from './new-run.js';
import { createDriver } from '../drive/run-driver.js';
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
}

/** Creates, commits and (when this runtime drives runs) starts a run. */
export async function startRun(ctx: StartContext, request: StartRequest): Promise<Run> {
  const { store, registry, owner, definition, leaseMs, drive } = ctx;
  const run = planNewRun(request, ctx.defaults);
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
  if (!result) {
    stageCreation(driver, run, row);
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
        `Idempotency key ${quoteId(run.request.options?.idempotencyKey ?? '')} belongs to run '${result.row.id}', started with a different ${differences.join(', ')}`,
        { details: { run_id: result.row.id, differences } },
      );
    }
    return toRun(result.row);
  }
  if (result.kind === 'busy') {
    const active = result.runId ? ` '${result.runId}'` : '';
    fail('session.busy', `Session ${quoteId(run.clientSessionId)} already has an active run${active}`, {
      details: { session_id: run.clientSessionId, active_run_id: result.runId },
    });
  }
  failpoint('run.created');
  if (!drive) return toRun(row);
  registry.register(row, driver);
  driver.start();
  driver.actor.send({ type: 'start' });
  return toRun(row);
}
