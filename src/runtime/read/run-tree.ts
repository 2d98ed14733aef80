/**
 * A run's place in a tree of runs (agents called as tools): the children its calls started, and,
 * while it waits on one, that child and the wait of a person somewhere below it, which the
 * parent shows (and which may be decided on the parent's id). Read beyond the run's row: one
 * index lookup for the children, and a walk down the waiting children only while it waits on one.
 */
import { DEFAULTS } from '../../defaults.js';
import type { RunStatus } from '../../../machines/types.js';
import type { ApprovalRow, RunRow, Store } from '../../store/index.js';
import { toPendingInput } from '../model/rows.js';
import type { ChildRun, ChildWait, Run } from '../model/types.js';

/** Children listed with a run (a run's agent tools start one per call). */
const MAX_CHILDREN = 100;

function toChild(row: RunRow): ChildRun {
  return { runId: row.id, toolCallId: row.parent_call_id ?? '', agent: row.agent, status: row.status as RunStatus };
}

/** The calls a wait is bound to, with the arguments they would run with (from the step's decision). */
async function boundCalls(store: Store, wait: ApprovalRow): Promise<{ id: string; tool: string; args: unknown }[]> {
  const ids = JSON.parse(wait.tool_call_ids) as string[];
  if (ids.length === 0) return [];
  const step = (await store.listSteps(wait.run_id)).find((s) => s.step_index === wait.step_index);
  const calls = step ? ((JSON.parse(step.decision) as { calls?: { tool: string; args: unknown }[] }).calls ?? []) : [];
  return ids.map((id) => {
    const call = calls[Number(id.slice(id.lastIndexOf('.c') + 2))];
    return { id, tool: call?.tool ?? '?', args: call?.args ?? null };
  });
}

/** The run down the tree under `row` (a run waiting on a child) that waits for a person, if any. */
async function askingBelow(store: Store, child: RunRow): Promise<ChildWait['asking']> {
  let row: RunRow | undefined = child;
  for (let depth = 0; row && depth < DEFAULTS.treeWalkSteps; depth += 1) {
    if (row.status !== 'waiting_human' || !row.pending_approval_id || !row.wait_reason) return null;
    // A run waiting for its call's work elsewhere (a task) asks no one: the runtime polls it.
    if (row.wait_reason === 'task') return null;
    if (row.wait_reason !== 'child') {
      const wait = await store.getApproval(row.pending_approval_id);
      return {
        runId: row.id,
        waitReason: row.wait_reason,
        pendingApprovalId: row.pending_approval_id,
        pendingInput: wait ? toPendingInput(wait) : null,
        toolCalls: wait ? await boundCalls(store, wait) : [],
      };
    }
    const next = await store.getApproval(row.pending_approval_id);
    const childId = next?.request ? (JSON.parse(next.request) as { child_run_id?: string }).child_run_id : undefined;
    row = childId ? await store.getRun(childId) : undefined;
  }
  return null;
}

/** What a run waiting on a child shows of it; null for a run that does not wait on one. */
export async function childWaitOf(store: Store, row: RunRow): Promise<ChildWait | null> {
  if (row.status !== 'waiting_human' || row.wait_reason !== 'child' || !row.pending_approval_id) return null;
  const wait = await store.getApproval(row.pending_approval_id);
  const childId = wait?.request ? (JSON.parse(wait.request) as { child_run_id?: string }).child_run_id : undefined;
  const child = childId ? await store.getRun(childId) : undefined;
  if (!child) return null;
  return { ...toChild(child), asking: await askingBelow(store, child) };
}

/** The run with its children and what it waits on, read from the store. */
export async function withTree(store: Store, row: RunRow, run: Run): Promise<Run> {
  // What it waits on first, then the children: a child listed is never older than the wait shown.
  const childWait = await childWaitOf(store, row);
  const children = await store.listRuns({ parentRunId: row.id, limit: MAX_CHILDREN });
  // Listed newest first by the store: a parent shows them in the order its calls made them.
  return { ...run, children: children.reverse().map(toChild), childWait };
}
