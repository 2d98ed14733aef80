/** The final answer reaches the session only with the transition to `succeeded`, in the same commit. */
import type { LiveRun } from '../drive/env.js';
import type { RunDriver } from '../drive/run-driver.js';

/** Stages the run's answer and its exchange (input, answer) into the session's history. */
export function stageAnswer(driver: RunDriver, run: LiveRun): void {
  const decision = driver.memory.journal.get(driver.context().stepIndex)?.decision;
  if (decision?.type !== 'final') return;
  driver.stage((writer) => {
    const now = Date.now();
    writer.setAnswer(driver.runId, decision.answer);
    for (const [role, content] of [
      ['user', run.input],
      ['assistant', decision.answer],
    ] as const) {
      writer.insertMessage({ session_id: run.sessionId, run_id: driver.runId, role, content, created_at: now });
    }
  });
}
