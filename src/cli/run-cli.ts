/** The `baton` command dispatcher: picks the subcommand and maps the outcome to an exit code. */
import { runArtifactCommand, runExportCommand } from './artifact-command.js';
import { runCancelCommand } from './cancel-command.js';
import { runPauseCommand, runResumeCommand } from './pause-command.js';
import { runSchedulesCommand } from './schedules-command.js';
import { usageError, wantsJson, writeFailure } from './cli-error.js';
import { processIo, type CliIo } from './cli-io.js';
import { closestName } from './closest-name.js';
import { runApproveCommand, runRejectCommand } from './decide-command.js';
import { runDemoCommand } from './demo-command.js';
import { runForkCommand, runRerunCommand } from './fork-command.js';
import { runEventsCommand } from './events-command.js';
import { runAnswerCommand, runEndCommand, runExtendCommand } from './human-commands.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { runPruneCommand } from './prune-command.js';
import { runRunCommand } from './run-command.js';
import { runRunsCommand } from './runs-command.js';
import { runServeCommand } from './serve-command.js';
import { runShowCommand } from './show-command.js';
import { runWorkerCommand } from './worker-command.js';
import { runToolsCommand } from './tools-command.js';

/** The top-level usage text. */
export const USAGE = `Usage: baton <command> [options]

Commands:
  serve              serve the HTTP API for an agent (default: the demo) on a SQLite file or
                     a PostgreSQL database
  worker             drive runs on a database shared with serve and other workers (no HTTP)
  run "<input>"      start a run and follow it live to its answer, asking for approvals and
                     answers
  runs               list runs
  show <run>         a run with its steps and tool calls
  events <run>       a run's events (--follow: live until it ends)
  approve <run>      approve a run's pending approval (--edit: with other arguments; --respond:
                     give the call's result instead of running it)
  reject <run>       reject a run's pending approval
  answer <run> <text>  answer the question a run waits on (--value: the answer as JSON)
  extend <run>       go on past a budget that ran out, with new limits (--max-llm-calls, …)
  end <run>          end a run that waits on a budget that ran out
  cancel <run>       cancel a run (--compensate: undo its completed calls first)
  pause <run>        stop a run before its next step, until it is resumed
  resume <run>       let a paused run go on where it stopped
  schedules [list|create|show|pause|resume|trigger|delete]  runs started on a cron, an
                     interval or an instant (ticked by serve and worker)
  fork <run> --at-step N  a new run from step N of a run: the steps before N copied, never run
                     again (--decision: another decision for step N)
  rerun              fork the failed runs a filter matches at the step each failed in
                     (--failure-code, --since 1h, --dry-run); the same rerun again makes none
  tools              the tools runs can call, and what each runs as (effect, risk, MCP origin)
  artifact <run> <sha256>  write an artifact the run stored (a large tool output) to stdout or --out
  export <run>       the whole run as one JSON document (events, steps, ledger, approvals, trace)
  prune              delete runs finished longer ago than --older-than, with what only they hold
  demo               run the built-in demo agent (archives stale configs after a human approval)

Commands other than serve, worker, prune and demo work in process on a database (--db: a file,
default ./.baton/baton.db, or a postgres:// URL) or against a server (--url, or $BATON_URL,
with --token or $BATON_TOKEN).
Every command takes --json (machine-readable output) and --help.

Options:
  -h, --help    show this help

${EXIT_HELP}

Run 'baton <command> --help' for a command's options.
`;

const COMMANDS: Record<string, (argv: string[], io: CliIo) => Promise<number>> = {
  serve: runServeCommand,
  worker: runWorkerCommand,
  run: runRunCommand,
  runs: runRunsCommand,
  show: runShowCommand,
  events: runEventsCommand,
  approve: runApproveCommand,
  reject: runRejectCommand,
  answer: runAnswerCommand,
  extend: runExtendCommand,
  end: runEndCommand,
  cancel: runCancelCommand,
  pause: runPauseCommand,
  resume: runResumeCommand,
  schedules: runSchedulesCommand,
  fork: runForkCommand,
  rerun: runRerunCommand,
  tools: runToolsCommand,
  artifact: runArtifactCommand,
  export: runExportCommand,
  prune: runPruneCommand,
  demo: runDemoCommand,
};

/**
 * Runs the command line `argv` (without the node and script paths); resolves with the exit code.
 * @example
 * process.exitCode = await runCli(['run', 'Archive the stale configs', '--approve']);
 */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      io.stderr.write(USAGE);
      return EXIT.usage;
    case '-h':
    case '--help':
    case 'help':
      io.stdout.write(USAGE);
      return EXIT.ok;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) {
    const meant = closestName(command, Object.keys(COMMANDS));
    const message = `unknown command '${command}'${meant ? `; did you mean '${meant}'?` : ''}`;
    writeFailure(io.stderr, 'baton', usageError(message).failure, {
      hint: "Run 'baton --help' for usage.",
      json: wantsJson(rest),
    });
    return EXIT.usage;
  }
  return run(rest, io);
}
