/**
 * The version check before a call runs (seed 002: "schema, policy, version and idempotency
 * checks"). A call is decided for the tool the planner was offered, and a started call was
 * started by the code deployed then; a process that resumes the run after a deploy that changed
 * the tool's version must not run the new code on the old decision by itself. Unless the tool
 * declares the recorded version compatible, a human decides: run it with the new version, or
 * reject it (the model is told) or end the run.
 */
import { createFailure } from '../../failure.js';
import type { CallScope } from './call-scope.js';
import { versionApprovalId } from '../model/ids.js';
import { pendingApproval } from '../ledger/ledger.js';
import type { PreparedCall } from '../ledger/prepared-call.js';

/** Whether a call may run now with the tool deployed: yes, or it waits for the human decision `approvalId`. */
export type VersionCheck = { kind: 'run' } | { kind: 'wait'; approvalId: string };

/** The version a call was decided or started with, if it is not the deployed one (and not declared compatible). */
export function staleVersionOf(call: PreparedCall, decidedWith: Record<string, string> | null): string | null {
  const tool = call.tool;
  if (!tool) return null;
  const recorded = call.row?.tool_version ?? decidedWith?.[call.toolName] ?? null;
  if (recorded === null || recorded === tool.version || tool.compatibleVersions?.includes(recorded)) return null;
  return recorded;
}

/** Checks a call's recorded version against the deployed tool; asks a human (once) when they differ. */
export function checkToolVersion(
  scope: CallScope,
  call: PreparedCall,
  decidedWith: Record<string, string> | null,
): VersionCheck {
  const recorded = staleVersionOf(call, decidedWith);
  if (recorded === null) return { kind: 'run' };
  const tool = call.tool!;
  const approvalId = versionApprovalId(call.id, tool.version);
  const approval = scope.live.driver.memory.approvals.get(approvalId);
  // Approved: a human chose the new version. (A rejection settled the call when it was decided.)
  if (approval && approval.status !== 'pending') return { kind: 'run' };
  if (!approval) {
    const failure = createFailure(
      'tool.version_mismatch',
      `Call ${call.id} was decided with version ${recorded} of tool '${tool.name}', and version ${tool.version} would run it now`,
      { details: { tool_call_id: call.id, tool: tool.name, recorded_version: recorded, version: tool.version } },
    );
    const { driver } = scope.live;
    driver.stageApproval(pendingApproval(approvalId, scope.runId, scope.stepIndex, 'version', [call]));
    driver.emit('approval_request', {
      approval_id: approvalId,
      reason: 'tool_version_mismatch',
      tool_calls: [
        {
          id: call.id,
          tool: call.toolName,
          args: call.args,
          risk: tool.risk,
          recorded_version: recorded,
          version: tool.version,
        },
      ],
      failure,
    });
  }
  return { kind: 'wait', approvalId };
}
