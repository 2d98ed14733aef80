/** `baton cancel <run>`: ends a run `failed` with stop reason `cancelled`, aborting a running tool. */
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { AGENT_HELP, AGENT_OPTIONS, TARGET_HELP, TARGET_OPTIONS, takePositionals, HELP_FLAG } from './parse-flags.js';
import { summarizeRun } from './summarize-run.js';

/** The usage text of `baton cancel`. */
export const CANCEL_USAGE = `Usage: baton cancel <run> [--reason <text>] [--json]
                    [--url <url> [--token <token>] | --db <file> [--agent <agent>]]

Cancels a run that has not ended: it ends failed, with stop reason 'cancelled'. A run that
has already ended cannot be cancelled (exit 1).

Options:
  --reason <text>   recorded with the cancellation
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

With --json, prints the run as one object.

${EXIT_HELP}
`;

/** Runs `baton cancel`; resolves with the exit code. */
export const runCancelCommand = defineCommand({
  name: 'cancel',
  usage: CANCEL_USAGE,
  options: { ...TARGET_OPTIONS, ...AGENT_OPTIONS, reason: { type: 'string' } },
  async run({ values, positionals }, { io, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const backend = await open(values, { drive: true });
    const run = await backend.cancel(runId!, values.reason);
    if (values.json) io.stdout.write(`${JSON.stringify(run)}\n`);
    else summarizeRun(run, io, false);
    return EXIT.ok;
  },
});
