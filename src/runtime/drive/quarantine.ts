/**
 * Rows that cannot be driven. A run whose stored JSON is damaged, whose snapshot has the wrong
 * shape, or whose status is unknown is quarantined: it is never resumed, every call that needs
 * it answers `store.corrupt_row` naming the run and the column, it blocks no other run, and an
 * operator can still end it (`cancel`), which writes it `failed` without its snapshot.
 */
import { isRunStateValue, isTerminalStatus } from '../../../machines/run-status.js';
import { LISTED_STATUSES, type RunStatus } from '../../../machines/types.js';
import { BatonError, type Failure } from '../../failure.js';
import type { RunRow, Store } from '../../store/index.js';
import type { EventHub } from '../model/event-hub.js';
import { corruptRow } from '../model/rows.js';
import type { RunEventRecord } from '../model/types.js';

const STATUSES: ReadonlySet<string> = new Set(LISTED_STATUSES);

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Parses a JSON column, or says which run and column are damaged. */
export function parseColumn(
  row: RunRow,
  column: 'context' | 'failure' | 'snapshot' | 'options',
  text: string,
): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new BatonError(corruptRow(row.id, column, reason(error)));
  }
}

/** True when a parsed snapshot has the shape of a run machine's persisted snapshot of this run. */
function isRunSnapshot(value: unknown, runId: string): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const snapshot = value as { value?: unknown; status?: unknown; context?: { runId?: unknown } };
  return (
    // A variant's nested state (`{ waiting_human: 'review' }`) is inside one of the six too.
    isRunStateValue(snapshot.value) &&
    (snapshot.status === 'active' || snapshot.status === 'done') &&
    typeof snapshot.context === 'object' &&
    snapshot.context !== null &&
    snapshot.context.runId === runId
  );
}

/** What keeps a row from being driven, or null when it can be: its status, its context, its snapshot. */
export function checkRunRow(row: RunRow): Failure | null {
  if (!STATUSES.has(row.status)) return corruptRow(row.id, 'status', `unknown status '${row.status}'`);
  try {
    parseColumn(row, 'context', row.context);
    const snapshot = parseColumn(row, 'snapshot', row.snapshot);
    if (!isRunSnapshot(snapshot, row.id)) {
      return corruptRow(row.id, 'snapshot', 'not a snapshot of this run (wrong shape)');
    }
  } catch (error) {
    if (error instanceof BatonError) return error.failure;
    throw error;
  }
  return null;
}

/**
 * Ends a quarantined run `failed` (`cancelled`), as an operator decided: the row and a `state`
 * event in one write; the snapshot is left as found, for whoever looks into it.
 */
export async function endQuarantinedRun(
  store: Store,
  hub: EventHub,
  row: RunRow,
  corrupt: Failure,
  cancelReason: string | undefined,
): Promise<void> {
  const failure: Failure = {
    ...corrupt,
    message: `${corrupt.message}; cancelled by an operator${cancelReason ? `: ${cancelReason}` : ''}`,
  };
  await endFromRow(store, hub, row, failure);
}

/**
 * Ends a run that no runtime drives `failed` (`cancelled`) from its row alone: the row (a
 * compare-and-set on its version: `run.version_conflict` if it changed since it was read) and
 * a `state` event from its status, in one write; its snapshot and counters are left as they are.
 */
export async function endFromRow(store: Store, hub: EventHub, row: RunRow, failure: Failure): Promise<void> {
  // No runtime drives it: its last event number is read first.
  const lastSeq = await store.lastSeq(row.id);
  const committed = await store.write((writer): RunEventRecord[] => {
    writer.saveProgress({
      id: row.id,
      expected_version: row.version,
      snapshot: row.snapshot,
      status: 'failed',
      stop_reason: 'cancelled',
      failure: JSON.stringify(failure),
      wait_reason: null,
      pending_approval_id: null,
      step_index: row.step_index,
      llm_calls: row.llm_calls,
      tool_calls: row.tool_calls,
      tokens: row.tokens,
      cost_usd: row.cost_usd,
      machine_version: row.machine_version,
      wake_at: null,
      compensation: row.compensation ?? null,
      deadline_at: row.deadline_at,
      updated_at: Date.now(),
    });
    const from: RunStatus | string = row.status;
    const data = { from, to: 'failed', step_index: row.step_index, stop_reason: 'cancelled', failure };
    const event: RunEventRecord = {
      runId: row.id,
      seq: lastSeq + 1,
      type: 'state',
      data,
      createdAt: Date.now(),
    };
    writer.insertEvent({
      run_id: row.id,
      seq: event.seq,
      type: 'state',
      data: JSON.stringify(data),
      created_at: event.createdAt,
    });
    return [event];
  });
  hub.publish(committed);
}

/**
 * Checks the rows of waiting runs (not loaded on open) in batches, one turn of the event loop
 * each, reporting the damaged ones and those this runtime's machine cannot restore.
 */
export async function sweepWaitingRows(
  store: Store,
  opts: {
    batch: number;
    isClosed(): boolean;
    check(row: RunRow): Failure | null;
    report(runId: string, problem: Failure): void;
  },
): Promise<void> {
  let after: { createdAt: number; id: string } | null = null;
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    if (opts.isClosed()) return;
    const page = await store.waitingRunsPage(after, opts.batch);
    for (const row of page) {
      const problem = opts.check(row);
      if (problem) opts.report(row.id, problem);
    }
    if (page.length < opts.batch) return;
    const last = page.at(-1)!;
    after = { createdAt: last.created_at, id: last.id };
  }
}

/** What is wrong with a run's row, if the run is unfinished and its row damaged (a quarantined run). */
export function damageOfUnfinished(row: RunRow | undefined): Failure | null {
  // Not finished: an active status, or one no state has (a damaged row).
  return row && !isTerminalStatus(row.status) ? checkRunRow(row) : null;
}
