/**
 * `baton pause <run>` and `baton resume <run>`: an operator stops a run before its next step (a
 * call in flight finishes first) and lets it go on where it stopped.
 */
import { isPostgresUrl } from '../store/index.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { AGENT_HELP, AGENT_OPTIONS, TARGET_HELP, TARGET_OPTIONS, takePositionals, HELP_FLAG } from './parse-flags.js';
import { summarizeRun } from './summarize-run.js';
import { terminalText } from './terminal-text.js';

/** The usage text of `baton pause`. */
export const PAUSE_USAGE = `Usage: baton pause <run> [--reason <text>] [--json]
                   [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Pauses a run before its next step: a call already in flight finishes and is recorded, then the
run waits (waiting_human, reason paused), holding no memory and surviving restarts, until
'baton resume <run>' (or a cancel). The command returns at once: until the run reaches its
pause it shows 'pause requested'. A run driven by another process on a SQLite file (a
'baton run' elsewhere) takes the pause at that process's next lease renewal, within a third
of its lease (10 s by default); a run that ends first never pauses. A run that is paused already, queued or ended cannot be
paused (exit 1).

Options:
  --reason <text>   recorded with the pause (you are recorded as who paused it)
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

With --json, prints the run as one object.

${EXIT_HELP}
`;

/** The usage text of `baton resume`. */
export const RESUME_USAGE = `Usage: baton resume <run> [--reason <text>] [--json]
                    [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Lets a paused run go on where it stopped: it plans its next step, or runs the calls of the
step it had planned. In process (--db), this command drives the run on until it ends or waits
for a person again; against a server (--url) the server does. A run that is not paused cannot
be resumed (exit 1).

Options:
  --reason <text>   recorded with the decision to resume
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

With --json, prints the run as one object.

${EXIT_HELP}
`;

/** Runs `baton pause`; resolves with the exit code. */
export const runPauseCommand = defineCommand({
  name: 'pause',
  usage: PAUSE_USAGE,
  options: { ...TARGET_OPTIONS, ...AGENT_OPTIONS, reason: { type: 'string' } },
  async run({ values, positionals }, { io, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const backend = await open(values, { drive: true, runId });
    const run = await backend.pause(runId!, values.reason === undefined ? {} : { reason: values.reason });
    if (values.json) {
      io.stdout.write(`${JSON.stringify(run)}\n`);
      return EXIT.ok;
    }
    if (run.pause_requested) {
      io.stdout.write(terminalText(`Pause requested: run ${run.id} stops before its next step.\n`));
      // Another process may drive it: on PostgreSQL it is told at once (so is a server's own run);
      // another process on a SQLite file hears only at its next lease renewal.
      if (backend.inProcess && !isPostgresUrl(backend.where)) {
        io.stdout.write(
          'A process that drives it on a SQLite file takes the pause at its next lease renewal (within a third of its lease, 10 s by default).\n',
        );
      }
    }
    summarizeRun(run, io, false);
    return EXIT.ok;
  },
});

/** Runs `baton resume`; resolves with the exit code. */
export const runResumeCommand = defineCommand({
  name: 'resume',
  usage: RESUME_USAGE,
  options: { ...TARGET_OPTIONS, ...AGENT_OPTIONS, reason: { type: 'string' } },
  async run({ values, positionals }, { io, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const backend = await open(values, { drive: true, runId });
    await backend.resume(runId!, values.reason === undefined ? {} : { reason: values.reason });
    const run = await backend.settle(runId!);
    if (values.json) io.stdout.write(`${JSON.stringify(run)}\n`);
    else summarizeRun(run, io, false);
    return run.status === 'failed' ? EXIT.failed : EXIT.ok;
  },
});
