/** Errors at the command line's boundary: whatever was thrown becomes one line and an exit code. */
import { BatonError } from '../index.js';
import { EXIT } from './exit-codes.js';
import { maskCredentials } from './mask.js';
import { terminalText } from './terminal-text.js';

/** A failure as the CLI reports it: a runtime failure, an API error body, or a usage mistake. */
export interface CliFailure {
  code: string;
  message: string;
  /** The HTTP status, when the failure came from a server. */
  status?: number;
  details?: Record<string, unknown>;
}

/** Thrown inside commands for failures that are not the runtime's (usage, HTTP, agent loading). */
export class CliError extends Error {
  readonly failure: CliFailure;
  constructor(failure: CliFailure) {
    super(failure.message);
    this.name = 'CliError';
    this.failure = failure;
  }
}

/** A usage mistake: exit code 2. */
export function usageError(message: string): CliError {
  return new CliError({ code: 'usage', message });
}

/** Whatever was caught, as a failure. */
export function toCliFailure(error: unknown): CliFailure {
  if (error instanceof CliError) return error.failure;
  if (error instanceof BatonError) return error.failure;
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal.error', message };
}

/** The exit code of a failure: 2 for usage, 4 for a missing run or approval, 1 otherwise. */
export function toExitCode(failure: CliFailure): number {
  if (failure.code === 'usage') return EXIT.usage;
  if (failure.code === 'run.not_found' || failure.code === 'approval.not_found') return EXIT.notFound;
  return EXIT.failed;
}

/**
 * Writes `baton <command>: <message> (<code>)` to stderr and answers the exit code. A URL's
 * password is masked, and so are the passwords of the URLs in `argv` (the command line) wherever
 * the message quotes them.
 */
export function reportError(
  command: string,
  error: unknown,
  stderr: NodeJS.WritableStream,
  argv: readonly string[] = [],
): number {
  const failure = toCliFailure(error);
  const message = maskCredentials(
    failure.message,
    argv.map((arg) => arg.replace(/^--[a-z-]+=/, '')),
  );
  const code = failure.code === 'usage' ? '' : ` (${failure.code})`;
  const hint =
    failure.code === 'usage'
      ? `\nRun 'baton ${command} --help' for usage.`
      : failure.code === 'run.version_conflict'
        ? `\nAnother process drives this run (is 'baton serve' running on this file?): use --url.`
        : failure.code === 'run.agent_mismatch'
          ? `\nPass --agent <the module of agent '${String(failure.details?.run_agent ?? '?')}'>, or --url for a server that runs it.`
          : '';
  stderr.write(`baton ${command}: ${terminalText(message)}${code}${hint}\n`);
  return toExitCode(failure);
}
