/**
 * What the deciding commands (`approve`, `reject`, `answer`, `extend`, `end`) share: the wait a
 * decision is about (by default the run's pending one), and how its outcome is told: one line
 * and the run's summary, or with `--json` one object `{ "approval": {...}, "run": {...} }`.
 */
import type { ApprovalJson } from './api-json.js';
import type { Backend } from './backend.js';
import { CliError } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { EXIT } from './exit-codes.js';
import { summarizeRun } from './summarize-run.js';
import { terminalText } from './terminal-text.js';

/** How every deciding command records and goes on, for its `--help`. */
export const DECISION_HELP = `With --url the decision is recorded as the token's name and the server goes on with the run.
In process the decision is recorded as cli:<user>, and this command drives the run on the
--db database until it ends or waits again, so the same --agent as the run's is needed. The
demo's tools act in the directory the run started with (a different --dir is refused).
With --json, prints one object: { "approval": {...}, "run": {...} }.`;

/**
 * The wait to decide: `given`, else the run's pending one; `input` asks for the question the run
 * waits on. A run that waits for none is a conflict (as a server answers it), not "not found".
 */
export async function waitIdOf(
  backend: Backend,
  runId: string,
  given: string | undefined,
  kind: 'approval' | 'input',
): Promise<string> {
  if (given !== undefined) return given;
  const got = await backend.get(runId);
  // A run waiting on its child: the wait a person decides is the one down the tree (on either id).
  const asking = got.child_wait?.asking;
  const run = asking
    ? { ...got, pending_approval_id: asking.pending_approval_id, pending_input: asking.pending_input }
    : got;
  // A question a call asks in flight is the run's only wait (the run executes meanwhile).
  const id = kind === 'input' ? run.pending_input?.id : (run.pending_approval_id ?? run.pending_input?.id);
  if (!id) {
    const waits = kind === 'input' ? 'waits for no answer' : 'waits for no approval';
    throw new CliError({
      code: 'run.invalid_transition',
      message: `Run '${run.id}' is ${run.status}${run.wait_reason ? ` (waiting for ${run.wait_reason})` : ''} and ${waits}`,
      details: { state: run.status, wait_reason: run.wait_reason },
    });
  }
  return id;
}

/** How a decision's line reads: what was done (`approved`, `answered`, …). */
export interface DecisionReport {
  /** What the decider did, for a decision the run's machine recorded but that did not end the wait. */
  done: string;
  /** True when the decision asks for the run to fail (`reject --terminate`, `end`): that is exit 0. */
  endsRun: boolean;
  json: boolean;
}

/** Settles the run the decision moved on, prints the outcome, and answers the exit code. */
export async function reportDecision(
  backend: Backend,
  runId: string,
  approval: ApprovalJson,
  io: CliIo,
  report: DecisionReport,
): Promise<number> {
  const run = await backend.settle(runId);
  // The exit code says how the run this decision moved on ended, as `baton run`'s does.
  const code = run.status === 'failed' && !report.endsRun ? EXIT.failed : EXIT.ok;
  if (report.json) {
    io.stdout.write(`${JSON.stringify({ approval, run })}\n`);
    return code;
  }
  const line =
    approval.status === 'pending'
      ? `Approval ${approval.id}: ${report.done} by you, recorded; the run waits for another decision`
      : `${approval.kind === 'input' ? 'Input' : 'Approval'} ${approval.id} ${outcomeOf(approval)} by ${String(approval.decided_by)}`;
  io.stdout.write(terminalText(`${line}\n`));
  summarizeRun(run, io, false);
  return code;
}

/** What was decided, in a word or two: `approved`, `approved (edit)`, `answered`, `rejected (end)`. */
function outcomeOf(approval: ApprovalJson): string {
  if (approval.kind === 'input') return approval.status === 'approved' ? 'answered' : approval.status;
  const shown = ['edit', 'respond', 'extend', 'end'];
  return approval.resolution && shown.includes(approval.resolution)
    ? `${approval.status} (${approval.resolution})`
    : approval.status;
}
