/** The question a run waits on, read with the run (`Run.pendingInput`). */
import type { ApprovalRow, RunRow, Store } from '../../store/index.js';

/** The wait row of a run that waits for an answer (one read, only for those runs), else null. */
export async function pendingInputRow(store: Pick<Store, 'getApproval'>, row: RunRow): Promise<ApprovalRow | null> {
  if (row.wait_reason !== 'input' || !row.pending_approval_id) return null;
  return (await store.getApproval(row.pending_approval_id)) ?? null;
}
