/**
 * `baton cancel <run>`: ends a run `failed` with stop reason `cancelled`, aborting a running tool;
 * with `--compensate`, the run first undoes its completed calls, and the command waits for that.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isTerminalRun, type RunJson } from './api-json.js';
import type { Backend } from './backend.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { AGENT_HELP, AGENT_OPTIONS, TARGET_HELP, TARGET_OPTIONS, takePositionals, HELP_FLAG } from './parse-flags.js';
import { summarizeRun } from './summarize-run.js';

/** The usage text of `baton cancel`. */
export const CANCEL_USAGE = `Usage: baton cancel <run> [--reason <text>] [--compensate] [--json]
                    [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Cancels a run that has not ended: it ends failed, with stop reason 'cancelled'. A run that
has already ended cannot be cancelled (exit 1).

Options:
  --reason <text>   recorded with the cancellation
  --compensate      first undo the run's completed calls that have a compensator, newest
                    first; waits until the run has ended, then lists what was undone and not
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
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    reason: { type: 'string' },
    compensate: { type: 'boolean', default: false },
  },
  async run({ values, positionals }, { io, open, signal }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const backend = await open(values, { drive: true, runId });
    const cancelled = await backend.cancel(runId!, {
      ...(values.reason === undefined ? {} : { reason: values.reason }),
      ...(values.compensate ? { compensate: true } : {}),
    });
    const run = values.compensate ? await untilEnded(backend, cancelled, signal) : cancelled;
    if (values.json) io.stdout.write(`${JSON.stringify(run)}\n`);
    else summarizeRun(run, io, false);
    return EXIT.ok;
  },
});

/** The run once its compensation is over: driven here in process; over HTTP, looked at until it has ended. */
async function untilEnded(backend: Backend, run: RunJson, signal: AbortSignal): Promise<RunJson> {
  if (backend.inProcess) return backend.settle(run.id);
  let now = run;
  while (!isTerminalRun(now) && !signal.aborted) {
    await sleep(100);
    now = await backend.get(run.id);
  }
  return now;
}
