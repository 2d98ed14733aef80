/**
 * Whether this runtime's machine may restore a stored run: a run of another machine is refused,
 * one of an older version is upgraded (if the machine says how), one of a newer version refused.
 * A restored run's deadline timer is armed for the deadline its context has now.
 */
import { deadlineToArm } from '../../../machines/run-status.js';
import type { RunContext } from '../../../machines/types.js';
import type { RunMachineDefinition } from '../../../machines/variants.js';
import { BatonError, createFailure, type Failure } from '../../failure.js';
import type { RunRow } from '../../store/index.js';

/** Why `definition` cannot restore a row's snapshot, or null when it can. */
export function machineMismatchOf(row: RunRow, definition: RunMachineDefinition): Failure | null {
  if (row.machine_name !== definition.name) {
    return createFailure(
      'run.machine_mismatch',
      `Run '${row.id}' was made by machine '${row.machine_name}', this runtime drives '${definition.name}'`,
      { details: { run_id: row.id, machine: row.machine_name, runtime_machine: definition.name } },
    );
  }
  if (row.machine_version === definition.version) return null;
  if (row.machine_version > definition.version || !definition.upgrade) {
    const why = row.machine_version > definition.version ? 'newer than this machine' : 'and the machine has no upgrade';
    return createFailure(
      'run.machine_mismatch',
      `Run '${row.id}' was saved by version ${row.machine_version} of machine '${row.machine_name}', ${why} (version ${definition.version})`,
      { details: { run_id: row.id, machine: row.machine_name, version: row.machine_version } },
    );
  }
  return null;
}

/** The snapshot of a row as `definition` restores it (upgraded if older); throws `run.machine_mismatch`. */
export function restorableSnapshot(row: RunRow, definition: RunMachineDefinition): string {
  const mismatch = machineMismatchOf(row, definition);
  if (mismatch) throw new BatonError(mismatch);
  const upgrade = row.machine_version === definition.version ? undefined : definition.upgrade;
  const snapshot = (upgrade ? upgrade(JSON.parse(row.snapshot), row.machine_version) : JSON.parse(row.snapshot)) as {
    context?: RunContext;
    children?: Record<string, { snapshot?: { input?: { deadlineAt?: number | null } } }>;
  };
  // The timer child restores with the input it was started with: the run's first deadline. A
  // person may have moved it since (`extend`), or be deciding about it (a budget wait on it).
  const timer = snapshot.children?.deadline?.snapshot?.input;
  const armed = snapshot.context ? deadlineToArm(snapshot.context) : undefined;
  if (!timer || armed === undefined || timer.deadlineAt === armed) {
    return upgrade ? JSON.stringify(snapshot) : row.snapshot;
  }
  timer.deadlineAt = armed;
  return JSON.stringify(snapshot);
}
