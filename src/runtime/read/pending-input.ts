/** The question a run waits on, read with the run (`Run.pendingInput`). */
import type { ApprovalRow, RunRow, Store } from '../../store/index.js';
import { asksInFlight } from '../model/rows.js';

/** The wait row of a run that waits for an answer (one read, only for those runs), else null. */
export async function pendingInputRow(
  store: Pick<Store, 'getApproval' | 'listApprovals'>,
  row: RunRow,
): Promise<ApprovalRow | null> {
  // A call that asks in flight: the run executes, and its question is pending among its waits.
  if (row.status === 'executing') {
    const waits = await store.listApprovals(row.id);
    return waits.find((w) => w.status === 'pending' && asksInFlight(w)) ?? null;
  }
  if (row.wait_reason !== 'input' || !row.pending_approval_id) return null;
  return (await store.getApproval(row.pending_approval_id)) ?? null;
}
