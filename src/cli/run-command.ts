/** `baton run "<input>"`: starts a run (in process or on a server) and follows it to its answer. */
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { followRun, type Decider } from './follow-run.js';
import { demoDir } from './load-agent.js';
import { describeDatabase } from './mask.js';
import { cliUser } from './os-user.js';
import { AGENT_HELP, AGENT_OPTIONS, TARGET_HELP, TARGET_OPTIONS, takePositionals, HELP_FLAG } from './parse-flags.js';
import { summarizeRun, toRunExitCode } from './summarize-run.js';
import { terminalText } from './terminal-text.js';

/** The usage text of `baton run`. */
export const RUN_USAGE = `Usage: baton run "<input>" [--session <id>] [--approve | --reject] [--json]
                 [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Starts a run with <input> and follows it live: state changes, tool calls and results, the
model's text as it streams, and approvals, which are asked on the terminal (y/N). It ends
with the run's answer.

Options:
  --session <id>    continue a session (default: a new session)
  --approve         approve every approval without asking
  --reject          reject every approval without asking (the model is told)
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

Without --url the run is driven in this process on the --db database. With --url the server
drives it and this command follows its event stream, reconnecting if the connection drops.
Without --approve or --reject, when stdin is not a terminal, an approval is not decided: the
run is left waiting (exit 3) for 'baton approve <run>' or 'baton reject <run>'.

${EXIT_HELP}
`;

/** Runs `baton run` with its arguments; resolves with the exit code. */
export const runRunCommand = defineCommand({
  name: 'run',
  usage: RUN_USAGE,
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    session: { type: 'string' },
    approve: { type: 'boolean', default: false },
    reject: { type: 'boolean', default: false },
  },
  async run({ values, positionals }, { io, signal, open }) {
    const [input] = takePositionals(positionals, { required: ['input'] });
    if (!input?.trim()) throw usageError('<input> is empty');
    if (values.approve && values.reject) throw usageError('--approve and --reject cannot be used together');
    const decider: Decider = values.approve ? 'approve' : values.reject ? 'reject' : 'ask';
    const backend = await open(values, { drive: true });
    const run = await backend.start({
      input,
      ...(values.session ? { session_id: values.session } : {}),
      // On a server the caller's identity comes from its token. The demo's directory is recorded,
      // so a later decision here acts where this run listed and read (see openBackend).
      ...(backend.inProcess
        ? {
            context: {
              user_id: cliUser(),
              ...((values.agent ?? 'demo') === 'demo' ? { configDir: demoDir(values.dir) } : {}),
            },
          }
        : {}),
    });
    if (!values.json) {
      io.stdout.write(terminalText(`Run ${run.id} (session ${run.session_id}) on ${backend.where}\n`));
      if (backend.planner) io.stdout.write(`Planner: ${backend.planner}\n`);
    }
    const outcome = await followRun(backend, run.id, { decider, json: values.json, signal }, io);
    if (outcome.kind === 'interrupted') {
      const now = await backend.get(run.id).catch(() => run);
      const next = backend.inProcess
        ? `it resumes when 'baton serve' opens ${backend.where}`
        : 'the server keeps driving it';
      io.stderr.write(`\nInterrupted: run ${run.id} is ${now.status}; ${next}\n`);
      return EXIT.interrupted;
    }
    const final = await backend.settle(run.id);
    summarizeRun(final, io, values.json);
    if (outcome.kind === 'waiting') {
      // The commands that work from here: the same server, or the same database (a URL's
      // password masked: stderr may well end up in a log).
      const target = backend.inProcess
        ? (values.db === undefined ? '' : ` --db ${describeDatabase(values.db)}`) +
          (values.agent === undefined ? '' : ` --agent ${values.agent}`)
        : ` --url ${backend.where}`;
      io.stderr.write(
        `Run ${run.id} is left waiting for approval ${outcome.approvalId}: stdin is not a terminal and neither ` +
          `--approve nor --reject was given. Decide with 'baton approve ${run.id}${target}' or ` +
          `'baton reject ${run.id}${target}'.\n`,
      );
      return EXIT.waiting;
    }
    return toRunExitCode(final);
  },
});
