/**
 * The live-run table: the runs this runtime drives now, each with the row's data its actors read,
 * and the loads under way. Invariant: at most one driver per run; callers that load one run at
 * the same time share one load, so one claim and one driver.
 */
import { runWaitTerms } from '../ledger/wait-terms.js';
import type { RunRow } from '../../store/index.js';
import type { RunUserContext } from '../../tools/define-tool.js';
import type { LiveRun } from '../drive/env.js';
import { parseColumn } from '../drive/quarantine.js';
import { forkTermsOf } from '../model/rows.js';
import type { RunDriver } from '../drive/run-driver.js';

/** The runs driven here and the loads under way. */
export interface LiveRuns {
  /** The runs driven here, by id: a run leaves it when it is let go of, lost or retired. */
  readonly runs: Map<string, LiveRun>;
  /** Enters a run's driver, with the data of its row its actors read at every step. */
  register(row: RunRow, driver: RunDriver): LiveRun;
  /** Runs `load` unless a load of the run is under way already; then that load's result is shared. */
  once(runId: string, load: () => Promise<LiveRun | undefined>): Promise<LiveRun | undefined>;
  /** True while a load of the run is under way. */
  isLoading(runId: string): boolean;
}

/** Creates an empty table. */
export function createLiveRuns(): LiveRuns {
  const runs = new Map<string, LiveRun>();
  const loading = new Map<string, Promise<LiveRun | undefined>>();
  return {
    runs,
    register(row, driver) {
      const run: LiveRun = {
        driver,
        sessionId: row.session_id,
        input: row.input,
        context: parseColumn(row, 'context', row.context) as RunUserContext,
        waits: runWaitTerms(parseColumn(row, 'options', row.options)),
        agent: row.agent,
        ...(row.parent_run_id !== null && row.parent_call_id !== null
          ? { parent: { runId: row.parent_run_id, callId: row.parent_call_id } }
          : {}),
      };
      const terms = row.forked_from === null ? null : forkTermsOf(row);
      if (row.forked_from !== null && terms) {
        run.fork = {
          sourceRunId: row.forked_from,
          step: terms.step,
          repeatEffects: terms.repeat_effects,
          decision: terms.decision,
          by: terms.by,
          memoryVersion: terms.memory_version ?? null,
          memoryBases: terms.memory_bases ?? [],
        };
      }
      runs.set(row.id, run);
      return run;
    },
    once(runId, load) {
      let pending = loading.get(runId);
      if (!pending) {
        pending = load().finally(() => loading.delete(runId));
        loading.set(runId, pending);
      }
      return pending;
    },
    isLoading: (runId) => loading.has(runId),
  };
}
