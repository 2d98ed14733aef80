/**
 * The two processes of a crash test: a child started with `{ ...config, phase: 'start' }` that a
 * failpoint kills (checked: SIGKILL, at the first hit of that failpoint, as its log says), then
 * one started with `phase: 'resume'` on the same database, which must exit 0 and print the run's
 * outcome as its last line of JSON.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { scaled } from './limits.js';
import { spawnChild } from './spawn-child.js';
import { tempFiles } from './temp.js';

/** Kills `script` at `failpoint` (`name=kill` or `name=kill@N`), resumes it, and answers what the resumed one printed. */
export async function killThenResume<T>(
  script: string,
  config: Record<string, unknown>,
  failpoint: string,
): Promise<T> {
  const log = join(tempFiles().dir, 'failpoints.log');
  const killed = await spawnChild(script, [JSON.stringify({ ...config, phase: 'start' })], {
    env: { BATON_FAILPOINTS: failpoint, BATON_FAILPOINTS_LOG: log },
    timeoutMs: scaled(60_000),
  });
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  expect(readFileSync(log, 'utf8')).toBe(`${failpoint.replace(/=kill$/, '=kill@1')}\n`);
  const resumed = await spawnChild(script, [JSON.stringify({ ...config, phase: 'resume' })], {
    timeoutMs: scaled(60_000),
  });
  expect(resumed.code, resumed.stderr).toBe(0);
  return JSON.parse(resumed.stdout.trim().split('\n').at(-1)!) as T;
}
