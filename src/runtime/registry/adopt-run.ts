/**
 * Picking up a run this runtime is to drive without being asked by a caller: a run a worker's
 * poll claimed (its owner died or let it go), and a run of its own picked up again after a failed
 * commit (`stall-retry.ts` decides when). Both are restored from the row; a claimed run that
 * cannot be driven here is reported, never thrown, and its lease left to lapse.
 */
import type { RunMachineDefinition } from '../../../machines/variants.js';
import { ACTIVE_STATUSES } from '../../../machines/types.js';
import { toFailure } from '../../failure.js';
import type { Claim, Store } from '../../store/index.js';
import { checkRunRow } from '../drive/quarantine.js';
import { machineMismatchOf } from '../drive/restore.js';
import type { RunDriver } from '../drive/run-driver.js';
import { agentMismatchOf, type AgentIdentity } from './agent-identity.js';
import type { LiveRuns } from './live-runs.js';
import type { RecoveryFailures } from './recovery-failures.js';
import type { RestoreRun } from './restore-run.js';

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATUSES);

/** What adoption needs from the registry. */
export interface AdoptDeps {
  store: Store;
  agent: AgentIdentity;
  definition: RunMachineDefinition;
  table: LiveRuns;
  restore: RestoreRun;
  reports: RecoveryFailures;
  isClosed(): boolean;
}

/** The registry's ways of taking up a run nobody asked it for. */
export interface Adoption {
  /** Drives a run a worker's poll claimed; a run that cannot be driven is reported (its lease lapses). */
  adopt(claim: Claim): Promise<void>;
  /**
   * Restores a run whose commit failed here, from its last commit; undefined when there is
   * nothing to drive (ended, live, held elsewhere). Throws when it cannot be restored.
   */
  resumeStalled(runId: string): Promise<RunDriver | undefined>;
}

/** Creates the adoption of one registry. */
export function createAdoption(deps: AdoptDeps): Adoption {
  const { store, table } = deps;
  return {
    async adopt(claim) {
      if (deps.isClosed()) return;
      const already = table.runs.get(claim.id);
      if (already) {
        // Its lease had lapsed and this runtime took it back: the claim is the driver's now.
        already.driver.reclaimed(claim.epoch);
        return;
      }
      try {
        const row = await store.getRun(claim.id);
        if (!row) return;
        const problem = checkRunRow(row) ?? machineMismatchOf(row, deps.definition) ?? agentMismatchOf(row, deps.agent);
        if (problem) {
          deps.reports.report(claim.id, problem);
          return;
        }
        await deps.restore(row, claim.epoch);
      } catch (error) {
        deps.reports.report(claim.id, toFailure(error));
      }
    },
    async resumeStalled(runId) {
      const row = await store.getRun(runId);
      if (!row || !ACTIVE.has(row.status) || table.runs.has(runId)) return undefined;
      return (await deps.restore(row))?.driver;
    },
  };
}
