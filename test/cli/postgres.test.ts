/**
 * The in-process commands on a PostgreSQL URL (`--db postgres://…`): they work on that database,
 * never on a file named like the URL, never print its password, and say so when they cannot
 * reach it or it holds no Baton runs.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { freshDatabase, hasPostgres } from '../helpers/pg.js';
import { tempDir } from '../helpers/temp.js';
import { baton, jsonLines, type CliOutcome } from './cli-child.js';
import { scaled } from '../helpers/limits.js';

const PASSWORD = 'pw-s3cret-42';
const REPORT_AGENT = fileURLToPath(new URL('./fixtures/report-agent.ts', import.meta.url));
/** A child's upper bound: PostgreSQL and a TypeScript loader on a busy machine, never a wait. */
const CHILD_MS = scaled(60_000);

/** A fresh database's URL with a password in it (the test cluster trusts local connections). */
async function databaseWithPassword(): Promise<string> {
  const url = new URL(await freshDatabase());
  url.password = PASSWORD;
  return url.toString();
}

/** A port on 127.0.0.1 that nothing listens on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function hasTable(url: string, table: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ found: string | null }>('select to_regclass($1)::text as found', [table]);
    return rows[0]?.found != null;
  } finally {
    await client.end();
  }
}

describe.skipIf(!hasPostgres())('the CLI on a PostgreSQL URL', () => {
  it('runs, lists, shows, exports, approves, rejects and cancels runs there, leaving no file named like the URL', async () => {
    const db = await databaseWithPassword();
    const cwd = tempDir();
    const outcomes: CliOutcome[] = [];
    const cli = async (args: string[]) => {
      const outcome = await baton([...args, '--db', db], { cwd, timeoutMs: CHILD_MS });
      outcomes.push(outcome);
      return outcome;
    };
    const demo = ['--dir', join(cwd, 'configs')];

    const ran = await cli(['run', 'Archive the stale configs', '--approve', ...demo]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/^Run (run_\S+) \(session \S+\) on postgres:\/\/postgres:\*\*\*@/m);
    expect(ran.stdout).toMatch(/^Answer: Archived 3 stale configs/m);
    const id = /^Run (run_\S+) succeeded$/m.exec(ran.stdout)![1]!;

    // Three runs left waiting for a decision (no terminal, no flag), decided below.
    const waiting: string[] = [];
    for (let i = 0; i < 3; i++) {
      const left = await cli(['run', 'Archive the stale configs', '--json', ...demo]);
      expect(left.code, left.stderr).toBe(3);
      expect(left.stderr).toContain(`--db postgres://postgres:***@`);
      waiting.push((jsonLines(left.stdout).at(-1) as { run: { id: string } }).run.id);
    }

    const listed = await cli(['runs', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const runs = (JSON.parse(listed.stdout) as { runs: { id: string; status: string }[] }).runs;
    expect(new Map(runs.map((r) => [r.id, r.status]))).toEqual(
      new Map([[id, 'succeeded'], ...waiting.map((w) => [w, 'waiting_human'] as [string, string])]),
    );

    const shown = await cli(['show', id, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    const detail = JSON.parse(shown.stdout) as { run: { id: string }; steps: unknown[]; tool_calls: unknown[] };
    expect(detail.run.id).toBe(id);
    expect(detail.steps).toHaveLength(4);
    expect(detail.tool_calls).toHaveLength(5);
    const events = await cli(['events', id]);
    expect(events.stdout.trim().split('\n').at(-1)).toMatch(/executing → succeeded$/);
    const exported = await cli(['export', id]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toMatchObject({ format: 'baton.run-export', run: { id, status: 'succeeded' } });

    const [toApprove, toReject, toCancel] = waiting as [string, string, string];
    const approved = await cli(['approve', toApprove, '--json', ...demo]);
    expect(approved.code, approved.stderr).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      approval: { status: 'approved' },
      run: { id: toApprove, status: 'succeeded', answer: expect.stringMatching(/^Archived 3 stale configs/) },
    });
    const rejected = await cli(['reject', toReject, '--reason', 'not now', '--json', ...demo]);
    expect(rejected.code, rejected.stderr).toBe(0);
    expect(JSON.parse(rejected.stdout)).toMatchObject({
      approval: { status: 'rejected', reason: 'not now' },
      run: { id: toReject, status: 'succeeded', answer: expect.stringMatching(/^Nothing was archived/) },
    });
    const cancelled = await cli(['cancel', toCancel, '--json', ...demo]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: toCancel, status: 'failed', stop_reason: 'cancelled' });
    const left = await cli(['runs', '--status', 'waiting_human', '--json']);
    expect(JSON.parse(left.stdout)).toEqual({ runs: [], next_cursor: null });

    // A tool output too large for the context is an artifact in PostgreSQL, read back by the CLI.
    const reported = await cli(['run', 'q4', '--json', '--agent', REPORT_AGENT]);
    expect(reported.code, reported.stderr).toBe(0);
    const reportRun = (jsonLines(reported.stdout).at(-1) as { run: { id: string } }).run.id;
    const doc = JSON.parse((await cli(['export', reportRun])).stdout) as { artifacts: { sha256: string }[] };
    expect(doc.artifacts).toHaveLength(1);
    const artifact = await cli(['artifact', reportRun, doc.artifacts[0]!.sha256]);
    expect(artifact.code, artifact.stderr).toBe(0);
    expect(createHash('sha256').update(artifact.stdout).digest('hex')).toBe(doc.artifacts[0]!.sha256);

    const demoRun = await cli(['demo', '--approve', ...demo]);
    expect(demoRun.code, demoRun.stderr).toBe(0);
    expect(demoRun.stdout).toMatch(/^Database: postgres:\/\/postgres:\*\*\*@/m);
    const all = await cli(['runs', '--limit', '200', '--json']);
    expect((JSON.parse(all.stdout) as { runs: unknown[] }).runs).toHaveLength(6);

    // Everything went to PostgreSQL: the working directory holds only the demo's configs.
    expect(readdirSync(cwd)).toEqual(['configs']);
    for (const outcome of outcomes) expect(outcome.stdout + outcome.stderr).not.toContain(PASSWORD);
  });

  it('reading a database no Baton process opened says so, and creates nothing in it', async () => {
    const db = await databaseWithPassword();
    const cwd = tempDir();
    for (const command of [['runs'], ['show', 'run_x'], ['events', 'run_x'], ['export', 'run_x']]) {
      const outcome = await baton([...command, '--db', db], { cwd, timeoutMs: CHILD_MS });
      expect(outcome.code, command.join(' ')).toBe(1);
      expect(outcome.stderr).toContain(
        `baton ${command[0]}: The Postgres database ${db.replace(PASSWORD, '***')} has no Baton tables`,
      );
      expect(outcome.stderr).toContain('(store.open_failed)');
    }
    const pruned = await baton(['prune', '--older-than', '30d', '--db', db], { cwd, timeoutMs: CHILD_MS });
    expect(pruned.code).toBe(1);
    expect(pruned.stderr).toContain('has no Baton tables');
    expect(await hasTable(db, 'baton_migrations')).toBe(false);
    expect(await hasTable(db, 'runs')).toBe(false);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('an unreachable URL fails every command with store.open_failed, its password masked', async () => {
    const db = `postgres://baton:${PASSWORD}@127.0.0.1:${await freePort()}/baton`;
    const masked = db.replace(PASSWORD, '***');
    const cwd = tempDir();
    const commands = [
      ['runs'],
      ['show', 'run_x'],
      ['events', 'run_x'],
      ['export', 'run_x'],
      ['artifact', 'run_x', 'f'.repeat(64)],
      ['prune', '--older-than', '30d'],
      ['run', 'Archive the stale configs', '--approve', '--dir', join(cwd, 'configs')],
      ['approve', 'run_x', '--dir', join(cwd, 'configs')],
      ['reject', 'run_x', '--dir', join(cwd, 'configs')],
      ['cancel', 'run_x', '--dir', join(cwd, 'configs')],
    ];
    const outcomes = await Promise.all(
      commands.map((command) => baton([...command, '--db', db], { cwd, timeoutMs: CHILD_MS })),
    );
    for (const [i, outcome] of outcomes.entries()) {
      const name = commands[i]![0]!;
      expect(outcome.code, `${name}: ${outcome.stderr}`).toBe(1);
      expect(outcome.stdout).not.toMatch(/No runs/);
      expect(outcome.stderr).toMatch(
        new RegExp(`^baton ${name}: Cannot open the Postgres database.*ECONNREFUSED.*\\(store\\.open_failed\\)$`, 'm'),
      );
      expect(outcome.stdout + outcome.stderr).not.toContain(PASSWORD);
    }
    // The commands that only read name the database, masked.
    for (const outcome of outcomes.slice(0, 6)) expect(outcome.stderr).toContain(masked);
    // Not one file named like the URL (the run and decision commands wrote the demo's configs).
    expect(readdirSync(cwd)).toEqual(['configs']);
  });

  it('masks a password given as a password= parameter too', async () => {
    const db = `postgres://baton@127.0.0.1:${await freePort()}/baton?password=${PASSWORD}`;
    const cwd = tempDir();
    for (const command of [
      ['runs'],
      ['run', 'Archive the stale configs', '--approve', '--dir', join(cwd, 'configs')],
    ]) {
      const outcome = await baton([...command, '--db', db], { cwd, timeoutMs: CHILD_MS });
      expect(outcome.code, outcome.stderr).toBe(1);
      expect(outcome.stderr).toMatch(/Cannot open the Postgres database/);
      expect(outcome.stdout + outcome.stderr).not.toContain(PASSWORD);
    }
    // And where the database answers: the run's report names it masked.
    const reachable = new URL(await freshDatabase());
    reachable.searchParams.set('password', PASSWORD);
    const ran = await baton(
      ['run', 'Archive the stale configs', '--approve', '--dir', join(cwd, 'configs'), '--db', reachable.toString()],
      { cwd, timeoutMs: CHILD_MS },
    );
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/password=\*\*\*/);
    expect(ran.stdout + ran.stderr).not.toContain(PASSWORD);
  });
});
