/**
 * `baton fork` and `baton rerun` as users run them (the built CLI in a child process): in
 * process on a file (the fork is driven here to its end), against `baton serve` over HTTP, and
 * a rerun after a model outage with its dry run, its report and its second run that makes
 * nothing; usage errors exit 2, a step the run has not reached exits 1 with the API's error.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import { tempDir } from '../helpers/temp.js';
import { baton, startServe, type CliOutcome } from './cli-child.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const json = (outcome: CliOutcome): Json => {
  expect(outcome.stderr).toBe('');
  return JSON.parse(outcome.stdout.trim().split('\n').at(-1)!) as Json;
};
const long = { timeoutMs: scaled(60_000) };

describe('baton fork', () => {
  it('forks a demo run in process at a step and drives the fork to its end; refuses what it cannot do', async () => {
    const dir = tempDir();
    const db = join(dir, 'baton.db');
    const configs = join(dir, 'configs');
    const demo = await baton(['demo', '--approve', '--db', db, '--dir', configs], long);
    expect(demo.code, demo.stderr).toBe(0);
    const source = json(await baton(['runs', '--db', db, '--json'])).runs[0] as Json;
    expect(source.status).toBe('succeeded');

    const forked = await baton(['fork', source.id, '--at-step', '3', '--db', db, '--dir', configs, '--json'], long);
    expect(forked.code, forked.stderr).toBe(0);
    const fork = json(forked);
    expect(fork).toMatchObject({ status: 'succeeded', forked_from: { run_id: source.id, step: 3 } });
    expect(fork.answer).toBe(source.answer);
    const shown = await baton(['show', fork.id, '--db', db]);
    expect(shown.stdout).toMatch(new RegExp(`^  forked\\s+from ${source.id} at step 3$`, 'm'));
    expect(shown.stdout).toMatch(
      new RegExp(`fs\\.list .* succeeded .*\\(copied from ${source.id}\\.s0\\.c0, not run here\\)$`, 'm'),
    );
    const listed = json(await baton(['runs', '--forked-from', source.id, '--db', db, '--json'])).runs as Json[];
    expect(listed.map((r) => r.id)).toEqual([fork.id]);

    const text = await baton(['fork', source.id, '--at-step', '2', '--db', db, '--dir', configs], long);
    // The archive step again: it waits for a person (exit 3), named in the output.
    expect(text.code, text.stderr).toBe(3);
    expect(text.stdout).toMatch(
      new RegExp(`^Forked ${source.id} at step 2: run (run_\\S+) \\(session ses_\\S+\\)$`, 'm'),
    );
    expect(text.stdout).toMatch(/^Run run_\S+ waiting_human, approval run_\S+\.s2\.approval$/m);

    const beyond = await baton(['fork', source.id, '--at-step', '9', '--db', db, '--json']);
    expect(beyond.code).toBe(1);
    expect(JSON.parse(beyond.stderr)).toMatchObject({
      error: { code: 'input.invalid', details: { at_step: 9, last_step: 3 } },
    });
    expect((await baton(['fork', source.id, '--db', db])).code).toBe(2);
    expect((await baton(['fork', source.id, '--at-step', '1', '--repeat-effects', 'maybe', '--db', db])).code).toBe(2);
    expect((await baton(['fork', source.id, '--at-step', '1', '--decision', '{nope', '--db', db])).code).toBe(2);
    expect((await baton(['fork', 'run_missing', '--at-step', '0', '--db', db])).code).toBe(4);
    const forks = json(await baton(['runs', '--db', db, '--json'])).runs as Json[];
    expect(forks.filter((r) => r.forked_from?.run_id === source.id)).toHaveLength(2);
  });

  it('forks over HTTP with --url: the server drives the fork', async () => {
    const dir = tempDir();
    const serve = await startServe(['--db', join(dir, 'baton.db'), '--port', '0', '--dir', join(dir, 'configs')]);
    try {
      const started = await baton(
        ['run', 'Archive the stale configs', '--approve', '--url', serve.url, '--json'],
        long,
      );
      expect(started.code, started.stderr).toBe(0);
      const source = (json(started).run as Json).id as string;
      const forked = json(await baton(['fork', source, '--at-step', '3', '--url', serve.url, '--json']));
      expect(forked).toMatchObject({ forked_from: { run_id: source, step: 3 } });
      const deadline = Date.now() + scaled(30_000);
      let shown: Json = forked;
      while (shown.status !== 'succeeded' && Date.now() < deadline) {
        shown = json(await baton(['show', forked.id, '--url', serve.url, '--json'])).run as Json;
      }
      expect(shown.status).toBe('succeeded');
    } finally {
      await serve.stop();
    }
  });
});

describe('baton rerun', () => {
  it('reruns the runs a model outage failed, reports each fork, and makes none the second time', async () => {
    const dir = tempDir();
    const db = join(dir, 'baton.db');
    const outage = join(dir, 'outage');
    const agent = ['--agent', 'test/cli/fixtures/outage-agent.ts', '--db', db];
    const env = { OUTAGE_FILE: outage };
    writeFileSync(outage, 'down');
    const failed: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const run = await baton(['run', `q${i}`, '--json', ...agent], { env, ...long });
      expect(run.code).toBe(1);
      const summary = json(run).run as Json;
      expect(summary.failure.code).toBe('planner.unavailable');
      failed.push(summary.id as string);
    }
    rmSync(outage);
    const dry = json(
      await baton(
        ['rerun', '--failure-code', 'planner.unavailable', '--since', '1h', '--dry-run', '--json', ...agent],
        { env, ...long },
      ),
    );
    expect(dry).toMatchObject({ dry_run: true, matched: 3, created: 0 });
    const text = await baton(['rerun', '--failure-code', 'planner.unavailable', '--since', '1h', ...agent], {
      env,
      ...long,
    });
    expect(text.code, text.stderr).toBe(0);
    for (const id of failed)
      expect(text.stdout).toMatch(new RegExp(`^${id} at step 1: forked run_\\S+ \\(succeeded\\)$`, 'm'));
    expect(text.stdout).toMatch(/^3 run\(s\) matched: 3 forked, 0 rerun before, 0 not forked$/m);
    const again = json(
      await baton(['rerun', '--failure-code', 'planner.unavailable', '--json', ...agent], { env, ...long }),
    );
    expect(again).toMatchObject({ matched: 3, created: 0, existing: 3 });
    const runs = json(await baton(['runs', '--json', '--db', db])).runs as Json[];
    expect(runs.filter((r) => r.status === 'succeeded' && r.forked_from !== null)).toHaveLength(3);
    expect((await baton(['rerun', '--status', 'waiting_human', ...agent], { env })).code).toBe(2);
    // A rerun names the runs it forks, or is a dry run.
    expect((await baton(['rerun', ...agent], { env })).code).toBe(2);
    // A fork that fails again makes the rerun exit 1, and is not rerun by the next one.
    writeFileSync(outage, 'down');
    expect((await baton(['run', 'late', '--json', ...agent], { env, ...long })).code).toBe(1);
    const failing = await baton(['rerun', '--failure-code', 'planner.unavailable', '--json', ...agent], {
      env,
      ...long,
    });
    expect(failing.code).toBe(1);
    expect(json(failing)).toMatchObject({ matched: 4, created: 1, existing: 3 });
    const none = json(
      await baton(['rerun', '--failure-code', 'planner.unavailable', '--json', ...agent], { env, ...long }),
    );
    expect(none).toMatchObject({ matched: 4, created: 0, existing: 4 });
    expect((await baton(['rerun', '--since', '5', ...agent], { env })).code).toBe(2);
  });
});
