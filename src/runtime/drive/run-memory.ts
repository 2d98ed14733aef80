/**
 * What a driver remembers of its run: the planner journal, the tool-call ledger and the
 * approvals. A new run starts empty; a restored run loads them once. Every later write of the
 * run goes through its driver (it holds the run's lease), so these maps stay a complete view:
 * the actors and decisions never query them again, and a unit of work checks its conditions
 * against them synchronously, on either dialect.
 */
import type { Usage } from '../../../machines/types.js';
import { decisionSchema, type Decision } from '../../planner/types.js';
import type { ApprovalRow, Store, ToolCallRow } from '../../store/index.js';

/** One journaled planner answer. */
export interface JournalEntry {
  decision: Decision;
  usage: Usage;
  /** The version of each tool the planner was offered (null for steps journaled before they were recorded). */
  toolVersions: Record<string, string> | null;
  /** The agent that planned it (the top of the handoff stack); null: the run's own agent. */
  agent: string | null;
  /** The memory version its planner read, which its calls read too (null: its agent has no memory tools). */
  memoryVersion: number | null;
}

/** The memory of a new run: empty. */
export function createRunMemory() {
  const journal = new Map<number, JournalEntry>();
  const ledger = new Map<string, ToolCallRow>();
  const approvals = new Map<string, ApprovalRow>();
  return {
    journal,
    ledger,
    approvals,
    /** The ledger in step and call order. */
    toolCalls(): ToolCallRow[] {
      return [...ledger.values()].sort((a, b) => a.step_index - b.step_index || a.call_index - b.call_index);
    },
  };
}

export type RunMemory = ReturnType<typeof createRunMemory>;

/** The memory of a restored run, loaded from the store. */
export async function loadRunMemory(store: Store, runId: string): Promise<RunMemory> {
  const memory = createRunMemory();
  const [steps, calls, approvals] = await Promise.all([
    store.listSteps(runId),
    store.listToolCalls(runId),
    store.listApprovals(runId),
  ]);
  for (const row of steps) {
    memory.journal.set(row.step_index, {
      decision: decisionSchema.parse(JSON.parse(row.decision)),
      usage: JSON.parse(row.usage) as Usage,
      toolVersions: row.tool_versions === null ? null : (JSON.parse(row.tool_versions) as Record<string, string>),
      agent: row.agent ?? null,
      memoryVersion: row.memory_version ?? null,
    });
  }
  for (const row of calls) memory.ledger.set(row.id, row);
  for (const row of approvals) memory.approvals.set(row.id, row);
  return memory;
}

/** The journaled decision of a step, if the planner answered it. */
export function loadDecision(memory: RunMemory, stepIndex: number): Decision | undefined {
  return memory.journal.get(stepIndex)?.decision;
}
