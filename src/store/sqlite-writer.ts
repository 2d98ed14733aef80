/**
 * The SQLite store's units of work: each unit runs in its own savepoint of the commit queue's
 * shared transaction, and each of its writes runs at once, conditions checked. A fenced unit
 * checks first, in its transaction, that its runtime still holds the run at the epoch it
 * claimed it with (as PostgreSQL's fenced unit does), so a runtime that lost its lease writes
 * nothing, not even a `started` row; a new run's unit inserts the row it is fenced on.
 */
import { approvalTaken, staleFence, tenantLimit, versionConflict } from './store-errors.js';
import type { CommitQueue } from './commit-queue.js';
import type { Prepared } from './sqlite-prepared.js';
import type { Fence, Store, UnitWriter } from './store-api.js';

/** `Store.write` over the prepared statements and the commit queue. */
export function sqliteWrite(prepared: Prepared, queue: CommitQueue, runsToDrive: () => void): Store['write'] {
  const { run, get } = prepared;
  // Rows a unit changed, its triggers' included: a run's end that changed more than its own row
  // handed its session to a queued run (trigger `runs_dequeue`), which is then to be claimed.
  const totalChanges = prepared.sqlite.prepare('select total_changes()').pluck();
  /** Set by a unit whose writes made a queued run `pending`; told once it has committed. */
  let promoted = false;
  /** The fence of the unit being written, until it is checked (units run one at a time). */
  let unchecked: Fence | null = null;
  const fenced = (): void => {
    const fence = unchecked;
    if (fence === null) return;
    unchecked = null;
    const held = get<{ id: string }>('holdsRun', { id: fence.runId, owner: fence.owner, epoch: fence.epoch });
    if (held === undefined) throw staleFence(fence);
  };
  const rowOf = (row: object) => row as Record<string, unknown>;
  const writer: UnitWriter = {
    ensureSession(id, now) {
      unchecked = null;
      run('ensureSession', { id, now });
    },
    insertRun(row) {
      unchecked = null;
      run('insertRun', rowOf(row));
    },
    capTenant(tenantId, cap) {
      const over = get(tenantId === null ? 'noTenantOverCap' : 'tenantOverCap', { tenant: tenantId, cap });
      if (over !== undefined) throw tenantLimit(tenantId, cap);
    },
    saveProgress(progress) {
      fenced();
      // Compare-and-set on `version`: no row changed when another writer got there first.
      const ends = progress.status === 'succeeded' || progress.status === 'failed';
      const before = ends ? (totalChanges.get() as number) : 0;
      if (run('saveProgress', rowOf(progress)).changes !== 1) throw versionConflict(progress.id);
      if (ends && (totalChanges.get() as number) - before > 1) promoted = true;
    },
    setAnswer(runId, answer) {
      fenced();
      run('setAnswer', { id: runId, answer });
    },
    setWakeAt(id, at) {
      fenced();
      run('setWakeAt', { id, at });
    },
    promoteQueueHead(sessionId, now) {
      fenced();
      if (run('promoteQueueHead', { session_id: sessionId, now }).changes > 0) promoted = true;
    },
    askCancel(id, request) {
      fenced();
      run('askCancel', { id, request });
    },
    insertLabel(runId, label, createdAt) {
      fenced();
      run('insertLabel', { run_id: runId, label, created_at: createdAt });
    },
    takePauseRequest(id) {
      fenced();
      run('takePauseRequest', { id });
    },
    insertStep(row) {
      fenced();
      run('insertStep', rowOf(row));
    },
    putToolCall(row) {
      fenced();
      run('putToolCall', rowOf(row));
    },
    insertApproval(row) {
      fenced();
      run('insertApproval', rowOf(row));
    },
    decideApproval(id, decision) {
      fenced();
      // Single use: only a pending approval changes.
      if (run('decideApproval', { id, ...decision }).changes !== 1) throw approvalTaken(id);
    },
    setApprovalVotes(id, votes) {
      fenced();
      if (run('setApprovalVotes', { id, votes }).changes !== 1) throw approvalTaken(id);
    },
    escalateApproval(id, escalation) {
      fenced();
      if (run('escalateApproval', { id, ...escalation }).changes !== 1) throw approvalTaken(id);
    },
    insertEvent(row) {
      fenced();
      run('insertEvent', rowOf(row));
    },
    putArtifact(row, runId) {
      fenced();
      run('putArtifact', rowOf(row));
      run('putArtifactRef', { sha256: row.sha256, run_id: runId });
    },
    insertMessage(row) {
      fenced();
      run('insertMessage', row);
    },
    refArtifact(sha256, runId) {
      fenced();
      run('putArtifactRef', { sha256, run_id: runId });
    },
    putMemory(row) {
      fenced();
      run('putMemory', row);
    },
  };
  /** Runs `work` as one unit under `fence` (checked before its first write). */
  const unit = <T>(work: (writer: UnitWriter) => T, fence: Fence | undefined): { value: T; promoted: boolean } => {
    unchecked = fence ?? null;
    promoted = false;
    try {
      return { value: work(writer), promoted };
    } finally {
      unchecked = null;
    }
  };
  // The same fence as PostgreSQL's: the owner and epoch, checked inside the unit's savepoint.
  return async (work, fence) => {
    const { value, promoted: handedOn } = await queue.write(() => unit(work, fence));
    if (handedOn) runsToDrive();
    return value;
  };
}
