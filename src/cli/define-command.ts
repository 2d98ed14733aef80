/**
 * The shape every backend command shares: strict flags, `--help`, one backend opened and always
 * closed, Ctrl-C as an abort signal, and any error reported as one line with its exit code.
 */
import type { ParseArgsConfig } from 'node:util';
import { reportError } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { EXIT } from './exit-codes.js';
import { onInterrupt } from './interrupt.js';
import { openBackend, type OpenedBackend, type TargetFlags } from './open-backend.js';
import { parseFlags } from './parse-flags.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** What a command's body gets. */
export interface CommandContext {
  io: CliIo;
  /** Aborted by Ctrl-C or SIGTERM. */
  signal: AbortSignal;
  /** Opens the backend the flags name; it is closed when the command ends. */
  open(flags: TargetFlags, options: { drive: boolean; runId?: string | undefined }): Promise<OpenedBackend>;
}

/** A command: its name, usage text, flags and body. */
export interface CommandSpec<O extends Options> {
  name: string;
  usage: string;
  options: O;
  run(parsed: ReturnType<typeof parseFlags<O>>, ctx: CommandContext): Promise<number>;
}

/** Turns a spec into `(argv, io) => exit code`. */
export function defineCommand<const O extends Options & { help: { type: 'boolean' } }>(spec: CommandSpec<O>) {
  return async (argv: string[], io: CliIo): Promise<number> => {
    let backend: OpenedBackend | undefined;
    const interrupt = onInterrupt();
    let code: number;
    let reported = false;
    try {
      const parsed = parseFlags(argv, spec.options);
      if ((parsed.values as { help?: boolean }).help) {
        io.stdout.write(spec.usage);
        return EXIT.ok;
      }
      code = await spec.run(parsed, {
        io,
        signal: interrupt.signal,
        async open(flags, options) {
          backend = await openBackend(flags, options);
          return backend;
        },
      });
    } catch (error) {
      reported = true;
      code = reportError(spec.name, error, io.stderr, argv);
    } finally {
      interrupt.dispose();
    }
    try {
      await backend?.close();
    } catch (error) {
      // A database that never opened fails to close the same way: the failure is already said.
      if (!reported) code = reportError(spec.name, error, io.stderr, argv);
    }
    return code;
  };
}
