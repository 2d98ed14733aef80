/** The `baton.approval` span: a human's wait, from the approval's request to its decision. */
import { baseAttributes, writeChildSpan, type EventHandler } from './otel-spans.js';

/** `approval_request`: the wait starts; its span is written when it is decided. */
export const onApprovalRequest: EventHandler = (_deps, _runId, run, event) => {
  run.approvals.set(String(event.data.approval_id), event);
};

/** `approval_result`: the wait's span, with the decision, who made it and why it was asked. */
export const onApprovalResult: EventHandler = (deps, runId, run, event, emit) => {
  const data = event.data;
  const asked = run.approvals.get(String(data.approval_id));
  run.approvals.delete(String(data.approval_id));
  if (!emit) return;
  writeChildSpan(deps, runId, 'baton.approval', asked?.createdAt ?? event.createdAt, event.createdAt, {
    ...baseAttributes(runId, run),
    'baton.approval.id': String(data.approval_id),
    'baton.approval.decision': String(data.decision),
    ...(data.by ? { 'baton.approval.decided_by': String(data.by) } : {}),
    ...(asked?.data.reason ? { 'baton.approval.reason': String(asked.data.reason) } : {}),
  });
};
