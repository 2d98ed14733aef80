/**
 * The runs this runtime cannot drive, each with why: a damaged row, another machine or a newer
 * version, another agent, a load that failed. A run is reported until it is driven here or an
 * operator ends it; the report is bounded, the oldest entries going first.
 */
import { TERMINAL_STATUSES } from '../../../machines/types.js';
import type { Failure } from '../../failure.js';
import type { Run } from '../model/types.js';

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);
/** Runs reported at most (the newest kept). */
const MAX_REPORTED = 10_000;

/** The runs reported as not driven here, and why. */
export interface RecoveryFailures {
  /** Why each reported run is not driven here, oldest report first. */
  readonly failures: ReadonlyMap<string, Failure>;
  /** Reports a run that cannot be driven here (again: it moves to the newest). */
  report(runId: string, failure: Failure): void;
  /** The run is driven here now, or an operator ended it: it is no longer reported. */
  clear(runId: string): void;
  /** A run as reported, with the reason it is quarantined when its row was found damaged. */
  withQuarantine(run: Run): Run;
}

/** Creates an empty report. */
export function createRecoveryFailures(): RecoveryFailures {
  const failures = new Map<string, Failure>();
  return {
    failures,
    report(runId, failure) {
      failures.delete(runId);
      failures.set(runId, failure);
      if (failures.size > MAX_REPORTED) failures.delete(failures.keys().next().value!);
    },
    clear(runId) {
      failures.delete(runId);
    },
    withQuarantine(run) {
      const damage = failures.get(run.id);
      return damage?.code === 'store.corrupt_row' && !TERMINAL.has(run.status) ? { ...run, failure: damage } : run;
    },
  };
}
