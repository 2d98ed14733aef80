/** `baton prune` on a database file, and `baton serve --retention` pruning on its schedule. */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime, createScriptedPlanner } from '../../src/index.js';
import { tempFiles } from '../helpers/temp.js';
import { baton, batonInProcess, jsonLines, startServe } from './cli-child.js';
import { scaled } from '../helpers/limits.js';

/** A database with `count` succeeded runs, each in its own session, all finished more than `agedMs` ago. */
async function databaseWithRuns(db: string, count: number, agedMs = 2): Promise<string[]> {
  const runtime = createRuntime({
    database: db,
    planner: createScriptedPlanner(() => ({ type: 'final', answer: 'ok' })),
    tools: [],
  });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await runtime.wait((await runtime.start({ input: `q${i}` })).id)).id);
  await runtime.close();
  // Strictly older than "now" (or than `agedMs` before it) when the command runs.
  const until = Date.now() + agedMs;
  while (Date.now() < until) await new Promise((resolve) => setImmediate(resolve));
  return ids;
}

async function runIds(db: string): Promise<string[]> {
  const listed = await batonInProcess(['runs', '--db', db, '--json']);
  return (JSON.parse(listed.stdout) as { runs: { id: string }[] }).runs.map((run) => run.id);
}

describe('baton prune', () => {
  it('counts with --dry-run, deletes what finished before --older-than, keeps --keep-last, refuses bad flags', async () => {
    const { db } = tempFiles();
    const ids = await databaseWithRuns(db, 3);
    const dry = await batonInProcess(['prune', '--older-than', '0s', '--dry-run', '--json', '--db', db]);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dry_run: true, runs: 3, steps: 3, messages: 6, sessions: 3 });
    expect((await runIds(db)).sort()).toEqual([...ids].sort());

    const none = await batonInProcess(['prune', '--older-than', '30d', '--db', db]);
    expect(none).toMatchObject({ code: 0 });
    expect(none.stdout).toMatch(/^Deleted 0 runs/);

    const kept = await batonInProcess(['prune', '--older-than', '0s', '--keep-last', '1', '--json', '--db', db]);
    const report = JSON.parse(kept.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ dry_run: false, runs: 2, sessions: 2, batches: 1 });
    expect(Object.keys(report).every((key) => /^[a-z_]+$/.test(key))).toBe(true);
    expect(await runIds(db)).toEqual([ids[2]]);

    for (const [args, says] of [
      [['prune', '--db', db], '--older-than'],
      [['prune', '--older-than', 'soon', '--db', db], '--older-than must be a duration'],
      [
        ['prune', '--older-than', '1d', '--status', 'waiting_human', '--db', db],
        '--status must be succeeded or failed',
      ],
      [['prune', '--older-than', '1d', '--keep-last', '-2', '--db', db], '--keep-last'],
    ] as const) {
      const refused = await batonInProcess([...args]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(says);
    }
    expect(await runIds(db)).toEqual([ids[2]]);
  });

  it('says a database file that is not there does not exist, instead of creating it to delete nothing', async () => {
    const { db } = tempFiles();
    for (const flags of [[], ['--dry-run']]) {
      const refused = await batonInProcess(['prune', '--older-than', '30d', ...flags, '--db', db]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`The database '${db}' does not exist`);
      expect(refused.stderr).toContain('(store.open_failed)');
    }
    expect(existsSync(db)).toBe(false);
  });

  it('refuses a duration without a unit instead of reading it as milliseconds, and deletes nothing', async () => {
    const { db } = tempFiles();
    // Finished more than 30 ms ago: `--older-than 30` read as milliseconds would delete them all.
    const ids = await databaseWithRuns(db, 2, 50);
    for (const [args, value] of [
      [['--older-than', '30'], '30'],
      [['--older-than=30'], '30'],
      [['--older-than', '0'], '0'],
      [['--older-than', '1.5', '--dry-run'], '1.5'],
    ] as const) {
      const refused = await batonInProcess(['prune', ...args, '--db', db]);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr).toContain(`--older-than needs a unit: '${value}' is ambiguous; write ${value}d (days)`);
      expect(refused.stderr).toContain(`Run 'baton prune --help' for usage.`);
    }
    expect((await runIds(db)).sort()).toEqual([...ids].sort());
  });

  it('baton serve refuses --retention and --retention-every without a unit, and says its retention at start', async () => {
    const { db, dir } = tempFiles();
    const serve = ['serve', '--port', '0', '--db', db, '--dir', `${dir}/configs`];
    // Without the fix these start a server that never exits: the child's limit ends them.
    const [bare, bareEvery] = await Promise.all([
      baton([...serve, '--retention', '30'], { timeoutMs: scaled(60_000) }),
      baton([...serve, '--retention', '30d', '--retention-every', '60'], { timeoutMs: scaled(60_000) }),
    ]);
    expect(bare.code, bare.stderr).toBe(2);
    expect(bare.stderr).toContain("baton serve: --retention needs a unit: '30' is ambiguous; write 30d (days)");
    expect(bareEvery.code, bareEvery.stderr).toBe(2);
    expect(bareEvery.stderr).toContain("--retention-every needs a unit: '60' is ambiguous");
    expect(bare.stdout + bareEvery.stdout).not.toMatch(/Listening/);

    const server = await startServe(serve.slice(1).concat(['--retention', '30d']));
    try {
      expect(server.output()).toMatch(/^Retention: finished runs older than 30d pruned every 1h$/m);
      expect(server.output()).toMatch(/^Database: .*\nRetention: .*\nAuth: /m);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
    const json = await startServe(serve.slice(1).concat(['--retention', '12h', '--retention-every', '15m', '--json']));
    try {
      const started = jsonLines(json.output()).find((line) => line.type === 'started');
      expect(started?.retention).toEqual({
        older_than: '12h',
        older_than_ms: 43_200_000,
        every: '15m',
        every_ms: 900_000,
      });
    } finally {
      expect((await json.stop()).code).toBe(0);
    }
    const none = await startServe(serve.slice(1));
    try {
      expect(none.output()).toMatch(/^Retention: none \(finished runs are kept; see --retention\)$/m);
    } finally {
      expect((await none.stop()).code).toBe(0);
    }
  });

  it('prunes on a schedule inside baton serve with --retention', async () => {
    const { db, dir } = tempFiles();
    await databaseWithRuns(db, 2);
    const server = await startServe([
      '--port',
      '0',
      '--db',
      db,
      '--dir',
      `${dir}/configs`,
      '--retention',
      '0s',
      '--retention-every',
      '1s',
    ]);
    try {
      const deadline = Date.now() + scaled(60_000);
      while (!/^Deleted 2 runs/m.test(server.output()) && Date.now() < deadline) {
        await new Promise((resolve) => server.proc.stdout.once('data', resolve).once('close', resolve));
      }
      expect(server.output()).toMatch(/^Retention: finished runs older than 0s pruned every 1s$/m);
      expect(server.output()).toMatch(/^Deleted 2 runs \(.*\) and 0 artifacts \(0 bytes\) in 1 batches/m);
    } finally {
      expect((await server.stop()).code).toBe(0);
    }
    expect(await runIds(db)).toEqual([]);
  });
});
