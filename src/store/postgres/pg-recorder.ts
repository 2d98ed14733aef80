/**
 * A PostgreSQL unit's writer: it records each write (a statement and its values, with what must
 * hold after it ran) for the unit to run when it commits; nothing touches the database here.
 */
import { approvalTaken, tenantLimit, versionConflict } from '../store-errors.js';
import type { StatementName } from '../statements.js';
import type { UnitWriter } from '../store-api.js';

/** One recorded write of a unit. */
export interface RecordedWrite {
  name: StatementName;
  values: Record<string, unknown>;
  /** Throws when the write changed no row but had to (a compare-and-set lost). */
  check?: (rowCount: number) => void;
}

/** A writer that appends the unit's writes to `ops`, in order. */
export function recorder(ops: RecordedWrite[]): UnitWriter {
  const push = (name: StatementName, values: object, check?: RecordedWrite['check']) =>
    ops.push({ name, values: values as Record<string, unknown>, ...(check ? { check } : {}) });
  return {
    ensureSession: (id, now) => push('ensureSession', { id, now }),
    insertRun: (row) => push('insertRun', row),
    capTenant: (tenantId, cap) => {
      push('lockTenant', { tenant: tenantId });
      push(tenantId === null ? 'noTenantOverCap' : 'tenantOverCap', { tenant: tenantId, cap }, (count) => {
        if (count > 0) throw tenantLimit(tenantId, cap);
      });
    },
    saveProgress: (progress) =>
      push('saveProgress', progress, (count) => {
        if (count !== 1) throw versionConflict(progress.id);
      }),
    setAnswer: (runId, answer) => push('setAnswer', { id: runId, answer }),
    setWakeAt: (id, at) => push('setWakeAt', { id, at }),
    promoteQueueHead: (sessionId, now) => push('promoteQueueHead', { session_id: sessionId, now }),
    askCancel: (id, request) => push('askCancel', { id, request }),
    takePauseRequest: (id) => push('takePauseRequest', { id }),
    insertLabel: (runId, label, createdAt) => push('insertLabel', { run_id: runId, label, created_at: createdAt }),
    insertStep: (row) => push('insertStep', row),
    putToolCall: (row) => push('putToolCall', row),
    insertApproval: (row) => push('insertApproval', row),
    decideApproval: (id, decision) =>
      push('decideApproval', { id, ...decision }, (count) => {
        if (count !== 1) throw approvalTaken(id);
      }),
    setApprovalVotes: (id, votes) =>
      push('setApprovalVotes', { id, votes }, (count) => {
        if (count !== 1) throw approvalTaken(id);
      }),
    escalateApproval: (id, escalation) =>
      push('escalateApproval', { id, ...escalation }, (count) => {
        if (count !== 1) throw approvalTaken(id);
      }),
    insertEvent: (row) => push('insertEvent', row),
    putArtifact: (row, runId) => {
      push('putArtifact', row);
      push('putArtifactRef', { sha256: row.sha256, run_id: runId });
    },
    insertMessage: (row) => push('insertMessage', row),
    refArtifact: (sha256, runId) => push('putArtifactRef', { sha256, run_id: runId }),
    // Versions in commit order: the unit takes the memory's lock before it computes the next.
    putMemory: (row) => {
      push('lockMemory', {});
      push('putMemory', row);
    },
  };
}
