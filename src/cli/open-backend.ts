/**
 * Choosing where a command's runs are: `--url` (or $BATON_URL) for a server, else the `--db`
 * database (a SQLite file or a PostgreSQL URL) in process.
 */
import { resolve } from 'node:path';
import { isPostgresUrl } from '../store/open-store.js';
import type { RunStatus } from '../index.js';
import type { Backend } from './backend.js';
import { usageError } from './cli-error.js';
import { createHttpBackend } from './http-backend.js';
import { requireBatonDatabase } from './database-exists.js';
import { createLocalBackend } from './local-backend.js';
import { loadAgent } from './load-agent.js';
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
  options: { drive: boolean; env?: Record<string, string | undefined> },
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
  const agent = options.drive ? await loadAgent(flags.agent ?? 'demo', { dir: flags.dir }) : undefined;
  return createLocalBackend({
    database,
    agent,
    model: { model: flags.model, baseURL: flags['base-url'] },
    by: cliUser(),
  });
}

/** `--status`, checked against the run statuses. */
export function toStatus(value: string | undefined, statuses: readonly RunStatus[]): RunStatus | undefined {
  if (value === undefined) return undefined;
  if (!(statuses as readonly string[]).includes(value)) {
    throw usageError(`--status must be one of ${statuses.join(', ')}, not '${value}'`);
  }
  return value as RunStatus;
}
