/** Errors at the command line's boundary: whatever was thrown becomes one line and an exit code. */
import { BatonError } from '../index.js';
import { EXIT } from './exit-codes.js';
import { maskCredentials } from './mask.js';
import { terminalText } from './terminal-text.js';

/** A failure as the CLI reports it: a runtime failure, an API error body, or a usage mistake. */
export interface CliFailure {
  code: string;
  /** As the runtime's failures say it (`user`, `system`, …); a server's answer carries its own. */
  kind?: string;
  message: string;
  /** The HTTP status, when the failure came from a server (for retrying; not printed). */
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

/** True when the command line asks for JSON output (`--json` before any `--`). */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * Writes a failure to stderr: `baton <command>: <message> (<code>)` and a hint on the next line,
 * or with `json`, one object `{"error":{code,message,…},"hint"?}` (the API's error body), so a
 * script reading `--json` output never has to parse text.
 */
export function writeFailure(
  stderr: NodeJS.WritableStream,
  where: string,
  failure: CliFailure,
  options: { hint?: string; json: boolean },
): void {
  if (options.json) {
    // The API's error body, whichever way the failure came: a server's answer, the runtime in
    // process, or the command line itself.
    const error = {
      code: failure.code,
      kind: failure.kind ?? (failure.code === 'usage' ? 'user' : 'system'),
      message: failure.message,
      ...(failure.details ? { details: failure.details } : {}),
    };
    stderr.write(`${JSON.stringify({ error, ...(options.hint ? { hint: options.hint } : {}) })}\n`);
    return;
  }
  const code = failure.code === 'usage' ? '' : ` (${failure.code})`;
  // What did not fit, one line each (a schema's issues: an edit, an answer, a start request).
  const issues = Array.isArray(failure.details?.issues)
    ? (failure.details.issues as { path?: unknown[]; message?: unknown }[])
        .map(
          (i) =>
            `\n  - ${Array.isArray(i.path) && i.path.length ? i.path.join('.') : '(the value)'}: ${String(i.message)}`,
        )
        .join('')
    : '';
  stderr.write(
    `${where}: ${terminalText(failure.message)}${code}${terminalText(issues)}${options.hint ? `\n${options.hint}` : ''}\n`,
  );
}

function hintOf(command: string, failure: CliFailure): string | undefined {
  switch (failure.code) {
    case 'usage':
      return `Run 'baton ${command} --help' for usage.`;
    case 'auth.required':
      return 'Pass the token with --token <token>, or set $BATON_TOKEN.';
    case 'auth.forbidden':
      return "This token's roles do not allow it (see the server's tokens file).";
    case 'run.version_conflict':
      return `Another process drives this run (is 'baton serve' running on this file?): use --url.`;
    case 'run.agent_mismatch':
      return `Pass --agent <the module of agent '${String(failure.details?.run_agent ?? '?')}', or of an agent that calls it as a tool>, or --url for a server that runs it.`;
    case 'server.listen_failed':
      return failure.details?.cause === 'EADDRNOTAVAIL'
        ? 'Choose an address of this machine with --host.'
        : 'Choose another port with --port (--port 0 picks a free one).';
    default:
      return undefined;
  }
}

/**
 * Reports what a command failed with (see `writeFailure`; JSON when `argv` has `--json`) and
 * answers the exit code. A URL's password is masked, and so are the passwords of the URLs in
 * `argv` (the command line) wherever the message quotes them.
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
  const hint = hintOf(command, failure);
  writeFailure(
    stderr,
    `baton ${command}`,
    { ...failure, message },
    { json: wantsJson(argv), ...(hint ? { hint } : {}) },
  );
  return toExitCode(failure);
}
