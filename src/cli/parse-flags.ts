/** Command-line parsing shared by the commands: strict flags, a usage error for anything wrong. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { usageError } from './cli-error.js';
import { closestName } from './closest-name.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Where a command's runs are: a server (`--url`, `--token`) or a database (`--db`: a file or a URL). */
export const TARGET_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  db: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies Options;

/** Which agent drives runs in process: `--agent`, the demo's `--dir`, and a model. */
export const AGENT_OPTIONS = {
  agent: { type: 'string' },
  dir: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
} as const satisfies Options;

/** The same text in every `--help` for the target options. */
export const TARGET_HELP = `  --url <url>       a Baton server (default $BATON_URL); without it, the command works
                    in this process on the --db database
  --token <token>   bearer token for the server (default $BATON_TOKEN)
  --db <db>         in process: a SQLite database file (default ./.baton/baton.db) or a
                    postgres://… URL (the database of 'baton serve')
  --json            machine-readable output: one JSON object (one per line for streams)`;

/** The last line of every command's options. */
export const HELP_FLAG = '  -h, --help        show this help';

/** The same text in every `--help` for the agent options. */
export const AGENT_HELP = `  --agent <agent>   in process: 'demo' (built in) or a module whose default export is
                    defineAgent(...) (default demo)
  --dir <dir>       the demo agent's config directory (default ./.baton/demo-configs)
  --model <name>    model to plan with (default $OPENAI_MODEL, else gpt-4.1-mini)
  --base-url <url>  an OpenAI-compatible endpoint (default $OPENAI_BASE_URL)`;

/** Parses `argv` strictly; unknown flags and missing values throw a usage error. */
export function parseFlags<const O extends Options>(
  argv: string[],
  options: O,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: true }>> {
  // `--limit -1` is a value, not a flag: joined as `--limit=-1` it reaches the flag's own check
  // (which names what is wrong) instead of parseArgs' "argument is ambiguous".
  const args: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : undefined;
    if (name && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i += 1;
    } else {
      args.push(arg);
    }
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unknown = (error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
    throw usageError(unknown ? unknownOption(message, options) : message);
  }
}

/** Node's "Unknown option" text, told as a mistyped flag with the one it most likely meant. */
function unknownOption(message: string, options: Options): string {
  const typed = /'(-[^']*)'/.exec(message)?.[1];
  if (!typed) return message;
  const flags = Object.entries(options).flatMap(([name, option]) => [
    `--${name}`,
    ...(option.short ? [`-${option.short}`] : []),
  ]);
  const meant = closestName(typed.split('=')[0]!, flags);
  return meant ? `Unknown option '${typed}'; did you mean '${meant}'?` : `Unknown option '${typed}'`;
}

/** The positionals of a command, checked against how many it takes. */
export function takePositionals(positionals: string[], names: { required: string[]; optional?: string[] }): string[] {
  const max = names.required.length + (names.optional?.length ?? 0);
  if (positionals.length < names.required.length) {
    throw usageError(`missing <${names.required[positionals.length]}>`);
  }
  if (positionals.length > max) throw usageError(`unexpected argument '${positionals[max]}'`);
  return positionals;
}

/** A positive integer flag, or a usage error naming the flag. */
export function toPositiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) throw usageError(`${flag} must be a positive integer, not '${value}'`);
  return Number(value);
}

/** A flag's JSON value (`--edit '{"to":"ops"}'`), or a usage error naming the flag. */
export function toJsonValue(value: string, flag: string): unknown {
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw usageError(`${flag} must be JSON (${reason}); quote it for the shell, e.g. ${flag} '{"key":"value"}'`);
  }
}

/** A whole number of 0 or more, or a usage error naming the flag. */
export function toCount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^(0|[1-9][0-9]*)$/.test(value)) throw usageError(`${flag} must be a whole number of 0 or more, not '${value}'`);
  return Number(value);
}

/** `--metadata key=value` flags as an object (values as text); a usage error for one without `=`. */
export function toMetadata(pairs: readonly string[] | undefined): Record<string, string> | undefined {
  if (!pairs || pairs.length === 0) return undefined;
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw usageError(`--metadata takes key=value, not '${pair}'`);
    const key = pair.slice(0, at);
    if (key in metadata) throw usageError(`--metadata ${key} is given more than once`);
    metadata[key] = pair.slice(at + 1);
  }
  return metadata;
}

/** `--tag` flags, each non-empty. */
export function toTags(tags: readonly string[] | undefined): string[] | undefined {
  if (!tags || tags.length === 0) return undefined;
  if (tags.some((tag) => tag === '')) throw usageError('--tag needs a tag');
  return [...tags];
}
