/**
 * Whether a `--db` database holds Baton's runs before a command that only reads or deletes them
 * opens it: opening creates a SQLite file, and migrates a PostgreSQL database (creates Baton's
 * tables), which such a command must not do to a path or database it was wrongly given.
 */
import { existsSync } from 'node:fs';
import pg from 'pg';
import { isPostgresUrl } from '../store/index.js';
import { CliError } from './cli-error.js';
import { describeDatabase, maskCredentials } from './mask.js';

/** How long a check waits for PostgreSQL to answer before it says it cannot connect. */
const CONNECT_TIMEOUT_MS = 15_000;

function openFailed(message: string, details: Record<string, unknown>): CliError {
  return new CliError({ code: 'store.open_failed', message, details });
}

/**
 * Throws `store.open_failed` unless `database` (a file path or a PostgreSQL URL, as `databaseOf`
 * makes it) exists and, on PostgreSQL, has Baton's tables; `given` is the flag's value, for messages.
 */
export async function requireBatonDatabase(database: string, given: string): Promise<void> {
  if (!isPostgresUrl(database)) {
    if (existsSync(database)) return;
    throw openFailed(`The database '${given}' does not exist (pass --db <file>, or --url for a server)`, {
      path: given,
    });
  }
  const shown = describeDatabase(database);
  const details = { database: shown };
  let client: pg.Client | undefined;
  let migrated: boolean;
  try {
    // Inside the try: a URL pg cannot parse throws here.
    client = new pg.Client({ connectionString: database, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    // A connection the server drops while this waits must not crash the process.
    client.on('error', () => undefined);
    await client.connect();
    const { rows } = await client.query<{ found: string | null }>(
      `select to_regclass('baton_migrations')::text as found`,
    );
    migrated = rows[0]?.found != null;
  } catch (error) {
    const reason = maskCredentials(error instanceof Error ? error.message : String(error), [database]);
    throw openFailed(`Cannot open the Postgres database ${shown}: ${reason}`, details);
  } finally {
    await client?.end().catch(() => undefined);
  }
  if (!migrated) {
    throw openFailed(
      `The Postgres database ${shown} has no Baton tables: no Baton process has opened it (pass the --db of 'baton serve', or --url for a server)`,
      details,
    );
  }
}
