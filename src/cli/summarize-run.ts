/** The last lines of a followed run: its answer and status, or a JSON summary line. */
import type { RunJson } from './api-json.js';
import { describeQuestion } from './answer-text.js';
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
  const c = run.compensation;
  if (c) {
    const list = (calls: { tool: string; tool_call_id: string }[]) =>
      calls.map((x) => `${x.tool} (${x.tool_call_id})`).join(', ');
    io.stdout.write(
      `Compensation: ${c.status}; ${c.compensated.length} undone${c.compensated.length > 0 ? `: ${terminalText(list(c.compensated))}` : ''}\n`,
    );
    for (const x of c.failed) {
      io.stdout.write(
        `  not undone, its compensation failed: ${terminalText(`${x.tool} (${x.tool_call_id}): ${x.failure.message}`)}\n`,
      );
    }
    for (const x of c.not_compensated) {
      const why = x.reason === 'no_compensator' ? 'no compensator' : 'its outcome is unknown';
      io.stdout.write(`  left as it is (${why}): ${terminalText(`${x.tool} (${x.tool_call_id})`)}\n`);
    }
  }
  if (run.pending_input) io.stdout.write(terminalText(`Question: ${describeQuestion(run.pending_input)}\n`));
  const asking = run.child_wait?.asking;
  const pending = asking
    ? `, waiting on child run ${run.child_wait!.run_id}: ${asking.pending_input ? `input ${asking.pending_input.id}` : `${asking.wait_reason === 'budget' ? 'budget wait' : 'approval'} ${asking.pending_approval_id}`}${asking.run_id === run.child_wait!.run_id ? '' : ` of run ${asking.run_id}`}`
    : run.child_wait
      ? `, waiting on child run ${run.child_wait.run_id} (${run.child_wait.status})`
      : run.pending_input
        ? `, input ${run.pending_input.id}`
        : run.wait_reason === 'task'
          ? `, waiting for its call's work elsewhere (${run.pending_approval_id}): the runtime polls it`
          : run.wait_reason === 'paused'
            ? `, paused (${run.pending_approval_id}): 'baton resume ${run.id}' (with the same --db or --url) lets it go on`
            : run.pending_approval_id
              ? `, ${run.wait_reason === 'budget' ? 'budget wait' : 'approval'} ${run.pending_approval_id}`
              : '';
  const pausing = run.pause_requested ? ', pause requested' : '';
  io.stdout.write(`Run ${run.id} ${run.status}${pausing}${run.stop_reason ? ` (${run.stop_reason})` : ''}${pending}\n`);
}

/** The exit code of a run's status: 0 succeeded, 1 failed, 3 waiting for a human, 1 otherwise. */
export function toRunExitCode(run: Pick<RunJson, 'status'>): number {
  if (run.status === 'succeeded') return EXIT.ok;
  if (run.status === 'waiting_human') return EXIT.waiting;
  return EXIT.failed;
}
