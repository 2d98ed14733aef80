/** `baton approve` and `baton reject`: decide a run's approval (by default, its pending one). */
import { CliError, usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { AGENT_HELP, AGENT_OPTIONS, TARGET_HELP, TARGET_OPTIONS, takePositionals, HELP_FLAG } from './parse-flags.js';
import { summarizeRun } from './summarize-run.js';
import { terminalText } from './terminal-text.js';

function usage(verb: 'approve' | 'reject'): string {
  const about =
    verb === 'approve'
      ? `Approves an approval of a run waiting for a human (by default its pending one, or
<approval>): the approved tool calls run, exactly those, once.`
      : `Rejects an approval of a run waiting for a human (by default its pending one, or
<approval>): the calls do not run, the model is told, and the run goes on.`;
  const flag = verb === 'approve' ? ' [--resolution retry|done]' : ' [--terminate [--compensate]]';
  const option =
    verb === 'approve'
      ? `  --resolution <r>  for an interrupted unsafe call (wait reason uncertain_side_effect):
                    'retry' runs it again (the default), 'done' records that it happened`
      : `  --terminate       end the run failed (stop reason 'rejected') instead of telling the model
  --compensate      with --terminate: first undo the run's completed calls that have a
                    compensator, newest first`;
  return `Usage: baton ${verb} <run> [<approval>] [--reason <text>]${flag} [--json]
                   [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

${about}

Options:
  --reason <text>   recorded with the decision
${option}
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

With --url the decision is recorded as the token's name and the server goes on with the run.
In process the decision is recorded as cli:<user>, and this command drives the run on the
--db database until it ends or waits again, so the same --agent as the run's is needed. The
demo's tools act in the directory the run started with (a different --dir is refused).
With --json, prints one object: { "approval": {...}, "run": {...} }.

${EXIT_HELP}
`;
}

function defineDecide(verb: 'approve' | 'reject') {
  return defineCommand({
    name: verb,
    usage: usage(verb),
    options: {
      ...TARGET_OPTIONS,
      ...AGENT_OPTIONS,
      reason: { type: 'string' },
      resolution: { type: 'string' },
      terminate: { type: 'boolean', default: false },
      compensate: { type: 'boolean', default: false },
    },
    async run({ values, positionals }, { io, open }) {
      const [runId, given] = takePositionals(positionals, { required: ['run'], optional: ['approval'] });
      const { resolution, terminate, compensate } = values;
      if (compensate && !terminate) throw usageError('--compensate goes with reject --terminate');
      if (verb === 'reject' && resolution !== undefined) throw usageError('--resolution goes with approve');
      if (verb === 'approve' && terminate) throw usageError('--terminate goes with reject');
      if (resolution !== undefined && resolution !== 'retry' && resolution !== 'done') {
        throw usageError(`--resolution must be retry or done, not '${resolution}'`);
      }
      const backend = await open(values, { drive: true, runId });
      let approvalId = given;
      if (approvalId === undefined) {
        const run = await backend.get(runId!);
        if (!run.pending_approval_id) {
          // The run exists; it is just not waiting for anyone (the same answer as the server's).
          throw new CliError({
            code: 'run.invalid_transition',
            message: `Run '${run.id}' is ${run.status} and waits for no approval`,
            details: { state: run.status },
          });
        }
        approvalId = run.pending_approval_id;
      }
      const approval = await backend.decide(runId!, approvalId, {
        decision: verb,
        ...(values.reason === undefined ? {} : { reason: values.reason }),
        ...(resolution === undefined ? {} : { resolution }),
        ...(terminate ? { terminate } : {}),
        ...(compensate ? { compensate } : {}),
      });
      const run = await backend.settle(runId!);
      // The exit code says how the run this decision moved on ended, as `baton run`'s does; a
      // rejection with --terminate ends it failed, which is what was asked.
      const code = run.status === 'failed' && !terminate ? EXIT.failed : EXIT.ok;
      if (values.json) {
        io.stdout.write(`${JSON.stringify({ approval, run })}\n`);
        return code;
      }
      const line =
        approval.status === 'pending'
          ? `Approval ${approval.id}: ${verb === 'approve' ? 'approved' : 'rejected'} by you, recorded; the run waits for another decision`
          : `Approval ${approval.id} ${approval.status} by ${String(approval.decided_by)}`;
      io.stdout.write(terminalText(`${line}\n`));
      summarizeRun(run, io, false);
      return code;
    },
  });
}

/** Runs `baton approve`; resolves with the exit code. */
export const runApproveCommand = defineDecide('approve');
/** Runs `baton reject`; resolves with the exit code. */
export const runRejectCommand = defineDecide('reject');
/** The usage texts of `baton approve` and `baton reject`. */
export const APPROVE_USAGE = usage('approve');
export const REJECT_USAGE = usage('reject');
