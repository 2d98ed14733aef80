/**
 * What a driver remembers of its run: the planner journal and the tool-call ledger. A new run
 * starts empty; a restored run loads both once. Every later write of the run goes through its
 * driver, so these maps stay a complete view and the actors never query the journal again.
 */
import type { Usage } from '../../machines/types.js';
import { decisionSchema, type Decision } from '../planner/types.js';
import type { Store, ToolCallRow } from '../store/index.js';

/** One journaled planner answer. */
export interface JournalEntry {
  decision: Decision;
  usage: Usage;
}

/** Creates the memory of a run, loading it from the store when the run is restored. */
export function createRunMemory(store: Store, runId: string, restored: boolean) {
  const journal = new Map<number, JournalEntry>();
  const ledger = new Map<string, ToolCallRow>();
  if (restored) {
    for (const row of store.listSteps(runId)) {
      journal.set(row.step_index, {
        decision: decisionSchema.parse(JSON.parse(row.decision)),
        usage: JSON.parse(row.usage) as Usage,
      });
    }
    for (const row of store.listToolCalls(runId)) ledger.set(row.id, row);
  }
  return {
    journal,
    ledger,
    /** The ledger in step and call order. */
    toolCalls(): ToolCallRow[] {
      return [...ledger.values()].sort((a, b) => a.step_index - b.step_index || a.call_index - b.call_index);
    },
  };
}

export type RunMemory = ReturnType<typeof createRunMemory>;
