/**
 * Loading a run on demand: a decision, a cancel, an event or a wake-up names a run that is in the
 * file and not live here. It is restored when it exists, its row is sound, it is this agent's and
 * it is not finished; otherwise the caller gets the failure that says why. `peek` reads the state
 * of such a run without loading it.
 */
import { createActor, type Snapshot, type SnapshotFrom } from 'xstate';
import type { RunMachine } from '../../../machines/run-machine.js';
import type { RunMachineDefinition } from '../../../machines/variants.js';
import { ACTIVE_STATUSES } from '../../../machines/types.js';
import { BatonError, fail, quoteId } from '../../failure.js';
import type { RunRow, Store } from '../../store/index.js';
import type { LiveRun } from '../drive/env.js';
import { checkRunRow } from '../drive/quarantine.js';
import { restorableSnapshot } from '../drive/restore.js';
import { agentMismatchOf, type AgentIdentity } from './agent-identity.js';
import type { LiveRuns } from './live-runs.js';
import type { RecoveryFailures } from './recovery-failures.js';
import type { RestoreRun } from './restore-run.js';

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATUSES);
/** Tries, 50 ms apart, to claim a waiting run another runtime is about to let go of. */
const WAITING_CLAIM_ATTEMPTS = 20;

/** What loading on demand needs from the registry. */
export interface LoadDeps {
  store: Store;
  agent: AgentIdentity;
  definition: RunMachineDefinition;
  /** The runtime's machine with its actors provided, for `peek`. */
  machine: RunMachine;
  table: LiveRuns;
  restore: RestoreRun;
  reports: RecoveryFailures;
}

/** Loading runs when something is asked of them. */
export interface RunLoader {
  /** The live run, loading it if it is persisted, not terminal and not driven elsewhere; throws why not. */
  load(runId: string, eventType: string): Promise<LiveRun>;
  /**
   * The state of a run that is in the file and not live here, restored into an actor that is
   * never started (nothing is claimed or written); undefined for a live run. Throws as `load`.
   */
  peek(runId: string, eventType: string): Promise<SnapshotFrom<RunMachine> | undefined>;
}

/** Creates the loader of one registry. */
export function createLoader(deps: LoadDeps): RunLoader {
  const { table } = deps;
  return {
    async load(runId, eventType) {
      for (let attempt = 0; ; attempt += 1) {
        const current = table.runs.get(runId);
        if (current) return current;
        const row = await loadableRow(deps, runId, eventType);
        const run = table.runs.get(runId) ?? (await deps.restore(row));
        if (run) return run;
        // A waiting run is let go by whoever holds it as soon as it has nothing left to write:
        // a decision that arrives in between waits a moment rather than failing.
        if (row.status !== 'waiting_human' || attempt >= WAITING_CLAIM_ATTEMPTS) {
          fail('run.version_conflict', `Run '${runId}' is driven by another runtime (${row.owner})`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async peek(runId, eventType) {
      if (table.runs.has(runId)) return undefined;
      const row = await loadableRow(deps, runId, eventType);
      const snapshot = JSON.parse(restorableSnapshot(row, deps.definition)) as Snapshot<unknown>;
      return createActor(deps.machine, { snapshot, input: undefined as never }).getSnapshot();
    },
  };
}

/** A run's row if it can be loaded: it exists, is not damaged, is this agent's and is not finished. */
async function loadableRow(deps: LoadDeps, runId: string, eventType: string): Promise<RunRow> {
  const row = await deps.store.getRun(runId);
  if (!row) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
  const damage = checkRunRow(row);
  if (damage) {
    deps.reports.report(runId, damage);
    throw new BatonError(damage);
  }
  // Another agent's run is never driven with this runtime's tools and planner.
  const mismatch = agentMismatchOf(row, deps.agent);
  if (mismatch) throw new BatonError(mismatch);
  if (!ACTIVE.has(row.status)) {
    fail('run.invalid_transition', `Run '${runId}' in state '${row.status}' cannot take '${eventType}'`, {
      details: { state: row.status, event: eventType },
    });
  }
  return row;
}
