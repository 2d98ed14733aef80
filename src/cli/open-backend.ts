/**
 * Choosing where a command's runs are: `--url` (or $BATON_URL) for a server, else the `--db`
 * database (a SQLite file or a PostgreSQL URL) in process.
 */
import { resolve } from 'node:path';
import { isPostgresUrl } from '../store/index.js';
import type { ListedStatus } from '../index.js';
import type { Backend } from './backend.js';
import { usageError } from './cli-error.js';
import { createHttpBackend } from './http-backend.js';
import { requireBatonDatabase } from './database-exists.js';
import { createLocalBackend } from './local-backend.js';
import { demoDir, loadAgent } from './load-agent.js';
import { cliUser } from './os-user.js';

/** The default database file of in-process commands. */
export const DEFAULT_DB = './.baton/baton.db';

/** A `--db` value as the runtime takes it: a PostgreSQL URL as given, a file path made absolute. */
export function databaseOf(db: string | undefined): string {
  const value = db ?? DEFAULT_DB;
  return isPostgresUrl(value) ? value : resolve(value);
}

/** The target and agent flags, as `parseFlags` returns them. */
export interface TargetFlags {
  url?: string | undefined;
  token?: string | undefined;
  db?: string | undefined;
  agent?: string | undefined;
  dir?: string | undefined;
  model?: string | undefined;
  'base-url'?: string | undefined;
}

/** A backend, and (in process) the planner that drives its runs. */
export type OpenedBackend = Backend & { planner?: string | undefined };

/**
 * Opens the backend the flags name. `drive` loads the agent, for commands after which a run
 * moves on in this process (run, approve, reject, cancel); reading commands do not need one.
 */
export async function openBackend(
  flags: TargetFlags,
  options: {
    drive: boolean;
    env?: Record<string, string | undefined>;
    /** The run a decision or cancel moves on: the demo's tools act where it recorded (see recordedDemoDir). */
    runId?: string | undefined;
  },
): Promise<OpenedBackend> {
  const env = options.env ?? process.env;
  const url = flags.url ?? env.BATON_URL;
  if (url) {
    if (flags.db !== undefined) throw usageError('--db and --url cannot be used together');
    const local = (['agent', 'dir', 'model', 'base-url'] as const).filter((flag) => flags[flag] !== undefined);
    if (local.length > 0)
      throw usageError(`--${local[0]} applies in process only, not with --url (the server has its agent)`);
    if (!/^https?:\/\//.test(url)) throw usageError(`--url must be an http:// or https:// URL, not '${url}'`);
    return createHttpBackend({ url, token: flags.token ?? env.BATON_TOKEN });
  }
  if (flags.token !== undefined) throw usageError('--token goes with --url');
  const database = databaseOf(flags.db);
  // Reading a file that is not there would create an empty one and say "No runs." (and reading
  // a PostgreSQL database would create Baton's tables in it).
  if (!options.drive) await requireBatonDatabase(database, flags.db ?? DEFAULT_DB);
  const dir = options.drive && options.runId ? await recordedDemoDir(database, flags, options.runId) : flags.dir;
  const agent = options.drive ? await loadAgent(flags.agent ?? 'demo', { dir }) : undefined;
  return createLocalBackend({
    database,
    agent,
    model: { model: flags.model, baseURL: flags['base-url'] },
    by: cliUser(),
  });
}

/** `--status`, checked against the run statuses. */
export function toStatus(value: string | undefined, statuses: readonly ListedStatus[]): ListedStatus | undefined {
  if (value === undefined) return undefined;
  if (!(statuses as readonly string[]).includes(value)) {
    throw usageError(`--status must be one of ${statuses.join(', ')}, not '${value}'`);
  }
  return value as ListedStatus;
}

/**
 * The directory the demo's tools act in for a decision or cancel of `runId` driven here: the one
 * the run recorded when `baton run` or `baton demo` started it here (`context.configDir`), so
 * the approved calls act where the run listed and read, not in whatever `--dir` (or its default)
 * this command got. A `--dir` that names another directory is refused; a run with none recorded
 * (started by a server, whose tools are bound to its own `--dir`) keeps `--dir`.
 */
async function recordedDemoDir(database: string, flags: TargetFlags, runId: string): Promise<string | undefined> {
  if ((flags.agent ?? 'demo') !== 'demo') return flags.dir;
  const peek = createLocalBackend({ database, agent: undefined, model: {}, by: cliUser() });
  let recorded: unknown;
  try {
    recorded = (await peek.get(runId)).context?.configDir;
  } finally {
    await peek.close();
  }
  if (typeof recorded !== 'string' || recorded === '') return flags.dir;
  if (flags.dir !== undefined && demoDir(flags.dir) !== recorded) {
    throw usageError(
      `Run '${runId}' acts in ${recorded} (the --dir it started with), not in ${demoDir(flags.dir)}: leave --dir out, or give that one`,
    );
  }
  return recorded;
}
