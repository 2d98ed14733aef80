/**
 * The README's HTTP API walk-through, run as written: its tokens file configures a real
 * `baton serve`, and each curl command of the "With curl:" block runs through bash against it,
 * with the example's run id replaced by the real one. What the comments say each prints is checked.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import { REPO_ROOT } from '../helpers/run-node.js';
import { tempDir } from '../helpers/temp.js';
import { startServe } from './cli-child.js';

const EXAMPLE_RUN = 'run_0mx1mcgi4000177b15c95c27e';

/** The first ```<lang> block after `marker` in the README. */
function readmeBlock(marker: string, lang: string): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf(marker);
  expect(from, `README.md has '${marker}'`).toBeGreaterThanOrEqual(0);
  const block = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(from))?.[1];
  expect(block, `a \`\`\`${lang} block after '${marker}'`).toBeDefined();
  return block!;
}

/** The block's variable assignments and its commands (continuation lines joined), comments dropped. */
function shellOf(block: string) {
  const lines = block.replace(/\\\n\s*/g, '').split('\n');
  const assignments = lines.filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.replace(/\s+#.*$/, ''));
  const commands = lines.filter((l) => l.startsWith('curl '));
  return { assignments, commands };
}

/** Runs `command` through bash after `prelude`; `stdout()` grows as it prints, `done` when it exits. */
function sh(prelude: string[], command: string) {
  const child = spawn('bash', ['-c', [...prelude, command].join('\n')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { stdout: () => stdout, stderr: () => stderr, done, kill: () => child.kill('SIGKILL') };
}

/** The SSE frames in `text` (comment lines, `: open`, left out): each frame's fields. */
function frames(text: string) {
  return text
    .split('\n\n')
    .map((f) => f.replace(/^:.*(\n|$)/gm, ''))
    .filter((f) => f.trim() !== '')
    .map((f) =>
      Object.fromEntries(f.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)])),
    );
}

describe('README: the HTTP API with curl', () => {
  it('runs its curl commands, with its tokens, as the comments say', { timeout: scaled(180_000) }, async () => {
    const dir = tempDir();
    const tokens = join(dir, 'tokens.json');
    writeFileSync(tokens, readmeBlock('### Tokens and tenants', 'json'));
    const server = await startServe([
      '--port',
      '0',
      '--db',
      join(dir, 'b.db'),
      '--dir',
      join(dir, 'configs'),
      '--tokens',
      tokens,
    ]);
    try {
      const { assignments, commands } = shellOf(readmeBlock('With curl:', 'sh'));
      expect(assignments[0]).toMatch(/^URL=/);
      const prelude = [`URL=${server.url}`, ...assignments.slice(1)];
      const [start, follow, resume, approve, cancel] = commands;
      expect(commands).toHaveLength(5);

      // Start: 201 with the run, pending, in the session the body named.
      const started = sh(prelude, start!);
      expect(await started.done, started.stderr()).toBe(0);
      const run = JSON.parse(started.stdout()) as Record<string, unknown>;
      expect(Object.keys(run).slice(0, 3)).toEqual(['id', 'session_id', 'status']);
      expect(run).toMatchObject({ session_id: 'ops-1', status: 'pending' });
      const id = run.id as string;
      const withRun = (command: string) => command.replaceAll(EXAMPLE_RUN, id);

      // Follow: live, up to the state the comment shows (the stream stays open while the run waits).
      const live = sh(prelude, withRun(follow!));
      await expect
        .poll(() => frames(live.stdout()).some((f) => f.data?.includes('"to":"waiting_human"')), {
          timeout: scaled(60_000),
        })
        .toBe(true);
      live.kill();
      const waiting = frames(live.stdout()).find((f) => f.data?.includes('"to":"waiting_human"'))!;
      expect(waiting).toMatchObject({ event: 'state', id: '20' });
      expect(JSON.parse(waiting.data!)).toMatchObject({
        run_id: id,
        seq: 20,
        type: 'state',
        data: { from: 'executing', to: 'waiting_human', wait_reason: 'approval', approval_id: `${id}.s2.approval` },
      });

      // Resume after 20: nothing until the decision, then only what follows, to the run's end.
      const resumed = sh(prelude, withRun(resume!));
      const decided = sh(prelude, withRun(approve!));
      expect(await decided.done, decided.stderr()).toBe(0);
      // The decision is recorded as the token's name.
      expect(JSON.parse(decided.stdout())).toMatchObject({
        id: `${id}.s2.approval`,
        status: 'approved',
        decided_by: 'alice',
      });
      expect(await resumed.done, resumed.stderr()).toBe(0);
      const after = frames(resumed.stdout());
      expect(after.map((f) => Number(f.id))).toEqual(after.map((_, i) => 21 + i));
      expect(JSON.parse(after.at(-1)!.data!)).toMatchObject({ type: 'state', data: { to: 'succeeded' } });

      // Cancel, on a run that has not ended: a second one in the same session.
      const second = sh(prelude, start!);
      expect(await second.done).toBe(0);
      const secondId = (JSON.parse(second.stdout()) as { id: string }).id;
      const cancelled = sh(prelude, cancel!.replaceAll(EXAMPLE_RUN, secondId));
      expect(await cancelled.done, cancelled.stderr()).toBe(0);
      expect(JSON.parse(cancelled.stdout())).toMatchObject({
        id: secondId,
        status: 'failed',
        stop_reason: 'cancelled',
      });
    } finally {
      await server.stop();
    }
  });
});
