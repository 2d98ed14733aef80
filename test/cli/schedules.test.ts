/**
 * `baton schedules` from the built CLI: against `baton serve` (which ticks them) a schedule made
 * every second starts runs found by `baton runs --metadata baton.schedule=<id>`; it is listed,
 * shown, paused, triggered, resumed and deleted; in process a schedule is stored for the
 * processes that tick; bad flags and a cron that does not parse change nothing.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { baton, startServe } from './cli-child.js';

describe('baton schedules', () => {
  it('against a server: creates a schedule that ticks, lists, shows, pauses, triggers, resumes and deletes it', async () => {
    const dir = tempDir();
    const server = await startServe(['--port', '0', '--db', join(dir, 's.db'), '--dir', join(dir, 'configs')]);
    const URL = ['--url', server.url];
    try {
      // The demo's runs wait for an approval: with overlap allow each tick starts one anyway.
      const created = await baton([
        'schedules',
        'create',
        'tick',
        '--every',
        '1s',
        '--input',
        'list the configs',
        '--overlap',
        'allow',
        '--tag',
        'ops',
        ...URL,
      ]);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^Schedule tick active: every 1s, overlap allow, catch-up none$/m);
      await waitUntil(async () => {
        const runs = await baton(['runs', '--metadata', 'baton.schedule=tick', '--json', ...URL]);
        return (JSON.parse(runs.stdout) as { runs: Json[] }).runs.length >= 2;
      }, 'two ticks');
      const listed = await baton(['schedules', ...URL]);
      expect(listed.stdout).toMatch(/^tick {2}active {2}every 1s {2}next \S+ {2}runs \d+$/m);
      const paused = await baton(['schedules', 'pause', 'tick', '--json', ...URL]);
      expect(JSON.parse(paused.stdout)).toMatchObject({ id: 'tick', status: 'paused', next_at: null, tags: ['ops'] });
      const triggered = await baton(['schedules', 'trigger', 'tick', ...URL]);
      expect(triggered.code, triggered.stderr).toBe(0);
      expect(triggered.stdout).toMatch(/^Schedule tick started run run_\S+ \(\w+\)\.$/m);
      const shown = await baton(['schedules', 'show', 'tick', ...URL]);
      expect(shown.stdout).toMatch(/^ {2}runs {6}\d+ started, \d+ ticks skipped$/m);
      expect((await baton(['schedules', 'resume', 'tick', ...URL])).stdout).toContain('Schedule tick active');
      expect((await baton(['schedules', 'delete', 'tick', ...URL])).stdout).toContain('Schedule tick deleted.');
      const gone = await baton(['schedules', 'show', 'tick', ...URL]);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain("Schedule 'tick' not found (schedule.not_found)");
    } finally {
      await server.stop();
    }
  });

  it('in process: stores a schedule for the processes that tick; refuses bad flags and definitions', async () => {
    const dir = tempDir();
    const DB = ['--db', join(dir, 'b.db')];
    const created = await baton([
      'schedules',
      'create',
      'daily',
      '--cron',
      '0 9 * * 1-5',
      '--tz',
      'Europe/Paris',
      '--input',
      'x',
      '--json',
      ...DB,
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      id: 'daily',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      runs: 0,
    });
    for (const [args, message, code] of [
      [['create', 'x', '--input', 'x'], 'create needs exactly one of --cron, --every and --at', 2],
      [['create', 'x', '--every', '1s', '--cron', '* * * * *', '--input', 'x'], 'exactly one of', 2],
      [['create', 'x', '--every', '1s'], 'create needs --input', 2],
      [['create', 'x', '--every', '1s', '--tz', 'UTC', '--input', 'x'], '--tz goes with --cron', 2],
      [['create', 'x', '--cron', '61 * * * *', '--input', 'x'], "Cron expression '61 * * * *' does not parse", 1],
      [['create', 'daily', '--every', '1s', '--input', 'x'], 'exists with another definition (schedule.conflict)', 1],
      [['frob'], "unknown action 'frob'", 2],
      [['show'], 'id', 2],
    ] as const) {
      const outcome = await baton(['schedules', ...args, ...DB]);
      expect(outcome.code, `${args.join(' ')}: ${outcome.stderr}`).toBe(code);
      expect(outcome.stderr).toContain(message);
    }
    const listed = await baton(['schedules', '--json', ...DB]);
    expect((JSON.parse(listed.stdout) as { schedules: Json[] }).schedules.map((s) => s.id)).toEqual(['daily']);
  });
});
