/**
 * A fork's calls and its source's effects (docs/architecture.md §4.8). A call of a fork that is
 * the same call as one its source already made — the same tool, the same arguments, not `read`,
 * and done (or possibly done) there — would do that effect a second time. An `idempotent` one
 * runs with the source's idempotency key, so the system it calls deduplicates; any other waits
 * for a person (`repeat_effect`) who runs it again, takes the source's result instead, or
 * refuses it — unless the fork was made with `repeatEffects: 'allow'`. A run that is no fork
 * never gets here.
 */
import { FAILED_TOOL_CALL_STATUSES, type ToolCallRow } from '../../store/index.js';
import { HUMAN_ASK } from '../../tools/human-ask.js';
import type { ToolResult } from '../../tools/tool-result.js';
import type { RepeatedCall } from '../model/types.js';
import { pendingApproval } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { repeatApprovalId } from '../model/ids.js';
import { compensatedCallOf } from '../model/rows.js';
import type { CallScope } from './call-scope.js';

/** Whether a call may run now: yes (naming the source's call it repeats, if any), or it waits for a person. */
export type RepeatCheck = { kind: 'run'; repeatOf: string | null } | { kind: 'wait'; approvalId: string };

/** Statuses of a source's call whose effect happened, or may have. */
function performed(row: ToolCallRow): boolean {
  return row.started_at !== null && !FAILED_TOOL_CALL_STATUSES.has(row.status) && row.status !== 'waiting';
}

/** The source's call that `call` would repeat, if any: the latest with its tool and arguments. */
async function repeatedCall(scope: CallScope, call: PreparedCall, sourceRunId: string): Promise<ToolCallRow | null> {
  // The source's ledger as it is now (it may still be running), and the fork's own copies of it
  // (which stay when the source is pruned).
  const rows = [
    ...(await scope.env.store.listToolCalls(sourceRunId)),
    ...[...scope.live.driver.memory.ledger.values()].filter((row) => row.copied_from !== null),
  ];
  let found: ToolCallRow | null = null;
  for (const row of rows) {
    if (row.tool !== call.toolName || row.args_hash !== call.argsHash || row.effect === 'read') continue;
    if (compensatedCallOf(row) !== null || !performed(row)) continue;
    if (!found || row.started_at! >= found.started_at!) found = row;
  }
  return found;
}

/** Checks a fork's call against its source's effects before it runs; asks a person (once) about a repeat. */
export async function checkRepeat(scope: CallScope, call: PreparedCall): Promise<RepeatCheck> {
  const fork = scope.live.fork;
  const tool = call.tool;
  if (!fork || !tool || tool.effect === 'read' || tool.name === HUMAN_ASK) return { kind: 'run', repeatOf: null };
  const { driver } = scope.live;
  const approvalId = repeatApprovalId(call.id);
  const approval = driver.memory.approvals.get(approvalId);
  if (approval) {
    // Approved: a person chose to run it again (`done` and a refusal settled it when decided).
    if (approval.status === 'pending') return { kind: 'wait', approvalId };
    const source = (JSON.parse(approval.request ?? '{}') as { source?: RepeatedCall }).source;
    return { kind: 'run', repeatOf: source?.toolCallId ?? null };
  }
  // An attempt was made already: the key it ran with stands (decided at its first attempt).
  if (call.row?.started_at != null) return { kind: 'run', repeatOf: null };
  const repeated = await repeatedCall(scope, call, fork.sourceRunId);
  if (!repeated) return { kind: 'run', repeatOf: null };
  const key = repeated.idempotency_key ?? repeated.id;
  if (tool.effect === 'idempotent') {
    // The receiving system deduplicates by key: the source's key makes this call the same one.
    call.idempotencyKey = key;
    return { kind: 'run', repeatOf: repeated.id };
  }
  if (fork.repeatEffects === 'allow') return { kind: 'run', repeatOf: repeated.id };
  const source: RepeatedCall = {
    runId: repeated.run_id,
    toolCallId: repeated.id,
    tool: repeated.tool,
    status: repeated.status,
    result: repeated.result ? (JSON.parse(repeated.result) as ToolResult) : null,
    idempotencyKey: key,
  };
  driver.stageApproval(
    pendingApproval(approvalId, scope.runId, scope.stepIndex, 'repeat', [call], {
      request: { kind: 'repeat', source },
    }),
  );
  driver.emit('approval_request', {
    approval_id: approvalId,
    reason: 'repeat_effect',
    tool_calls: [{ id: call.id, tool: call.toolName, args: call.args, risk: tool.risk, effect: tool.effect }],
    source: { run_id: source.runId, tool_call_id: source.toolCallId, status: source.status },
  });
  return { kind: 'wait', approvalId };
}
