/** The `baton` command dispatcher: picks the subcommand and maps the outcome to an exit code. */
import { processIo, type CliIo } from './cli-io.js';
import { runDemoCommand } from './demo-command.js';

/** The top-level usage text. */
export const USAGE = `Usage: baton <command> [options]

Commands:
  demo    run the built-in demo agent (archives stale configs after a human approval)

Options:
  -h, --help    show this help

Run 'baton <command> --help' for a command's options.
`;

/**
 * Runs the command line `argv` (without the node and script paths); resolves with the exit code.
 * @example
 * process.exitCode = await runCli(['demo', '--approve']);
 */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      io.stderr.write(USAGE);
      return 2;
    case '-h':
    case '--help':
    case 'help':
      io.stdout.write(USAGE);
      return 0;
    case 'demo':
      return runDemoCommand(rest, io);
    default:
      io.stderr.write(`baton: unknown command '${command}'\nRun 'baton --help' for usage.\n`);
      return 2;
  }
}
