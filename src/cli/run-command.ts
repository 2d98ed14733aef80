/** `baton run "<input>"`: starts a run (in process or on a server) and follows it to its answer. */
import { describeQuestion } from './answer-text.js';
import type { RunJson } from './api-json.js';
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { followRun, type Decider } from './follow-run.js';
import { demoDir } from './load-agent.js';
import { describeDatabase } from './mask.js';
import { cliUser } from './os-user.js';
import {
  AGENT_HELP,
  AGENT_OPTIONS,
  TARGET_HELP,
  TARGET_OPTIONS,
  takePositionals,
  toMetadata,
  toTags,
  HELP_FLAG,
} from './parse-flags.js';
import { summarizeRun, toRunExitCode } from './summarize-run.js';
import { terminalText } from './terminal-text.js';

/** What `--on-busy` takes. */
const ON_BUSY = ['reject', 'enqueue', 'interrupt'] as const;

/** The usage text of `baton run`. */
export const RUN_USAGE = `Usage: baton run "<input>" [--session <id> [--on-busy <what>]] [--approve | --reject] [--json]
                 [--metadata <key>=<value>]... [--tag <tag>]...
                 [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Starts a run with <input> and follows it live: state changes, tool calls and results, the
model's text as it streams, and approvals, which are asked on the terminal (y/N). A question
the run asks (wait reason input) is answered with a line read from the terminal, or from
stdin when it is piped ('echo 3 | baton run …'). It ends with the run's answer.

Options:
  --session <id>    continue a session (default: a new session)
  --on-busy <what>  when the session has an active run: reject (the default: exit 1,
                    session.busy), enqueue (wait for it to end, then run) or interrupt
                    (cancel it, run now)
  --metadata <k>=<v>  keep this entry on the run, to find it by ('baton runs --metadata');
                    repeatable, values kept as text
  --tag <tag>       tag the run ('baton runs --tag'); repeatable
  --approve         approve every approval without asking (questions are still read)
  --reject          reject every approval and decline every question without asking (the
                    model is told), and end a run whose budget ran out
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

Without --url the run is driven in this process on the --db database. With --url the server
drives it and this command follows its event stream, reconnecting if the connection drops.
Without --approve or --reject, when stdin is not a terminal, an approval is not decided: the
run is left waiting (exit 3) for 'baton approve <run>' or 'baton reject <run>'. A question
with --json, with no stdin, or with no line to read (end of input, an empty line) is left
waiting the same way, for 'baton answer <run> <text>'; a budget that ran out (a run started
with on_budget_exceeded 'ask') for 'baton extend <run> …' or 'baton end <run>'.

${EXIT_HELP}
`;

/** Why a run is left waiting, and the commands that decide it from here (with `target`'s flags). */
function leftWaiting(
  runId: string,
  outcome: { approvalId: string; waitReason: string; forbidden: boolean },
  target: string,
  run: RunJson,
): string {
  const why = outcome.forbidden
    ? 'this token may not decide it (another role is needed)'
    : 'stdin is not a terminal and neither --approve nor --reject was given';
  if (outcome.waitReason === 'input') {
    const question = run.pending_input ? `: ${describeQuestion(run.pending_input)}` : '';
    return terminalText(
      `Run ${runId} is left waiting for an answer to input ${outcome.approvalId}${question}\n` +
        `No answer was read (--json, no stdin, or an empty line). Answer with ` +
        `'baton answer ${runId} "<text>"${target}' (or --value '<json>'), or decline with 'baton reject ${runId}${target}'.`,
    );
  }
  if (outcome.waitReason === 'paused') {
    return `Run ${runId} was paused by an operator (approval ${outcome.approvalId}). Let it go on with 'baton resume ${runId}${target}'.`;
  }
  if (outcome.waitReason === 'budget') {
    return (
      `Run ${runId} is left waiting on a budget that ran out (approval ${outcome.approvalId}). Go on with ` +
      `'baton extend ${runId} --max-llm-calls <n>${target}' (or another limit), or end it with 'baton end ${runId}${target}'.`
    );
  }
  return (
    `Run ${runId} is left waiting for approval ${outcome.approvalId}: ${why}. Decide with ` +
    `'baton approve ${runId}${target}' or 'baton reject ${runId}${target}'.`
  );
}

/** Runs `baton run` with its arguments; resolves with the exit code. */
export const runRunCommand = defineCommand({
  name: 'run',
  usage: RUN_USAGE,
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    session: { type: 'string' },
    'on-busy': { type: 'string' },
    metadata: { type: 'string', multiple: true },
    tag: { type: 'string', multiple: true },
    approve: { type: 'boolean', default: false },
    reject: { type: 'boolean', default: false },
  },
  async run({ values, positionals }, { io, signal, open }) {
    const [input] = takePositionals(positionals, { required: ['input'] });
    if (!input?.trim()) throw usageError('<input> is empty');
    if (values.approve && values.reject) throw usageError('--approve and --reject cannot be used together');
    const decider: Decider = values.approve ? 'approve' : values.reject ? 'reject' : 'ask';
    const onBusy = values['on-busy'];
    if (onBusy !== undefined && !ON_BUSY.includes(onBusy as (typeof ON_BUSY)[number])) {
      throw usageError(`--on-busy must be one of ${ON_BUSY.join(', ')}, not '${onBusy}'`);
    }
    if (onBusy !== undefined && !values.session)
      throw usageError('--on-busy needs --session: a new session is never busy');
    // Checked before anything is opened (a database, the demo's directory).
    const metadata = toMetadata(values.metadata);
    const tags = toTags(values.tag);
    const backend = await open(values, { drive: true });
    const run = await backend.start({
      input,
      ...(values.session ? { session_id: values.session } : {}),
      ...(onBusy ? { options: { on_busy: onBusy as (typeof ON_BUSY)[number] } } : {}),
      ...(metadata ? { metadata } : {}),
      ...(tags ? { tags } : {}),
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
      if (run.status === 'queued') {
        io.stdout.write(
          terminalText(`Queued: session ${run.session_id} has an active run; this one starts once it ends\n`),
        );
      }
      if (backend.planner) io.stdout.write(`Planner: ${backend.planner}\n`);
    }
    const outcome = await followRun(backend, run.id, { decider, json: values.json, signal }, io);
    if (outcome.kind === 'interrupted') {
      const now = await backend.get(run.id).catch(() => run);
      const next =
        now.status === 'queued'
          ? `it starts once the runs before it in session ${now.session_id} have ended (cancel it with 'baton cancel ${run.id}')`
          : backend.inProcess
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
      io.stderr.write(`${leftWaiting(run.id, outcome, target, final)}\n`);
      return EXIT.waiting;
    }
    return toRunExitCode(final);
  },
});
