/**
 * A call of an agent tool (`agentTool`): instead of running `execute`, it starts a child run of
 * the agent, whose id is derived from the call's, so a call interrupted anywhere finds the same
 * child again and never starts a second. The call's row becomes `waiting` (naming the child) and
 * the parent waits for the child to end (reason `child`) holding no actor; the child's end
 * settles the call (`ledger/child-wait.ts`).
 */
import type { ExecutorOutcome } from '../../../machines/types.js';
import { DEFAULTS } from '../../defaults.js';
import { createFailure } from '../../failure.js';
import { toErrorResult } from '../../tools/tool-result.js';
import { callRow, highestRisk, pendingApproval } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import { failpoint } from '../model/failpoints.js';
import { childWaitId } from '../model/ids.js';
import type { CallScope } from './call-scope.js';

/** What a call of an agent tool does now: wait for its child, or nothing more (it is settled). */
export async function callChild(
  scope: CallScope,
  call: PreparedCall,
  toolCalls: { before: number; executed: number },
): Promise<ExecutorOutcome | null> {
  const { live, runId, stepIndex, env } = scope;
  const { driver } = live;
  const delegate = call.tool!.delegate!;
  const waitId = childWaitId(call.id);
  const waiting = (counted: number): ExecutorOutcome => ({
    type: 'need_approval',
    approvalId: waitId,
    reason: 'child',
    toolCalls: counted,
    risk: highestRisk([call]),
  });
  const wait = driver.memory.approvals.get(waitId);
  // Its child ended and settled the call in the same unit: nothing more to do.
  if (wait && wait.status !== 'pending') return null;
  if (wait) return waiting(toolCalls.executed);
  const depth = runId.split('.child').length - 1;
  if (depth >= DEFAULTS.maxChildDepth) {
    const failure = createFailure(
      'tool.failed',
      `Tool '${call.toolName}' was not run: run '${runId}' is ${depth} child runs deep, and agents called as tools nest at most ${DEFAULTS.maxChildDepth} deep`,
      { details: { depth, max_depth: DEFAULTS.maxChildDepth } },
    );
    scope.settle(call, 'failed', toErrorResult(failure));
    return null;
  }
  failpoint('child.starting');
  const childId = await env.children.start(live, {
    callId: call.id,
    agent: delegate.agent.name,
    input: delegate.toInput(call.parsed),
    budget: delegate.budget,
    toolCalls: toolCalls.before + toolCalls.executed + 1,
  });
  failpoint('child.created');
  if (scope.signal.aborted) return null;
  const row = callRow(runId, stepIndex, call, {
    status: 'waiting',
    attempts: (call.row?.attempts ?? 0) + 1,
    started_at: call.row?.started_at ?? Date.now(),
    child_run_id: childId,
  });
  call.row = row;
  driver.stageToolCall(row);
  driver.stageApproval(
    pendingApproval(waitId, runId, stepIndex, 'child', [call], {
      request: { kind: 'child', child_run_id: childId, agent: delegate.agent.name },
      role: 'none',
    }),
  );
  driver.emit('child', {
    tool_call_id: call.id,
    tool: call.toolName,
    args: call.args,
    child_run_id: childId,
    agent: delegate.agent.name,
    status: 'started',
  });
  return waiting(toolCalls.executed + 1);
}
