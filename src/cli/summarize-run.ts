/** The last lines of a followed run: its answer and status, or a JSON summary line. */
import type { RunJson } from './api-json.js';
import type { CliIo } from './cli-io.js';
import { EXIT } from './exit-codes.js';
import { terminalText } from './terminal-text.js';

/** Writes the run's outcome: `Answer: …` and `Run <id> <status>`, or `{"type":"summary","run":…}`. */
export function summarizeRun(run: RunJson, io: CliIo, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify({ type: 'summary', run })}\n`);
    return;
  }
  if (run.answer !== null) io.stdout.write(`\nAnswer: ${terminalText(run.answer)}\n`);
  if (run.failure) io.stdout.write(`Failure: ${run.failure.code}: ${terminalText(run.failure.message)}\n`);
  const pending = run.pending_approval_id ? `, approval ${run.pending_approval_id}` : '';
  io.stdout.write(`Run ${run.id} ${run.status}${run.stop_reason ? ` (${run.stop_reason})` : ''}${pending}\n`);
}

/** The exit code of a run's status: 0 succeeded, 1 failed, 3 waiting for a human, 1 otherwise. */
export function toRunExitCode(run: Pick<RunJson, 'status'>): number {
  if (run.status === 'succeeded') return EXIT.ok;
  if (run.status === 'waiting_human') return EXIT.waiting;
  return EXIT.failed;
}
