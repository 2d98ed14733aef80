/**
 * PostgreSQL for tests: `.ci/run` starts a throwaway cluster and passes its URL in
 * `BATON_TEST_PG_URL`; each test file gets databases of its own, dropped after it. Locally
 * without the variable the Postgres tests skip; CI sets `BATON_REQUIRE_PG=1`, where a missing
 * URL fails instead.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';

const ADMIN_URL = process.env.BATON_TEST_PG_URL;

/** True when Postgres tests can run; throws when CI requires them and no cluster was given. */
export function hasPostgres(): boolean {
  if (!ADMIN_URL && process.env.BATON_REQUIRE_PG === '1') {
    throw new Error('BATON_REQUIRE_PG=1 but BATON_TEST_PG_URL is not set: the Postgres tests cannot be skipped here');
  }
  return ADMIN_URL !== undefined && ADMIN_URL !== '';
}

const created: string[] = [];

afterAll(async () => {
  if (created.length === 0 || !ADMIN_URL) return;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    for (const name of created.splice(0)) await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
});

/** A new, empty database on the test cluster; its URL. */
export async function freshDatabase(): Promise<string> {
  if (!ADMIN_URL) throw new Error('no Postgres cluster (BATON_TEST_PG_URL)');
  const name = `baton_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  created.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
