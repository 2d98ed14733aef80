/**
 * `baton pause` and `baton resume`, from the built CLI: in process on a database file (`resume`
 * drives the run on) and against `baton serve` (the server does, and records the token's name as
 * who paused it). A run asked to pause while it waits on a person pauses once that wait is over;
 * what cannot be paused or resumed exits 1 and changes nothing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJsonLines } from '../helpers/json-lines.js';
import type { Json } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { baton, jsonLines, startServe, type CliOutcome } from './cli-child.js';

const AGENT = ['--agent', 'test/cli/fixtures/human-agent.ts'];

function place() {
  const dir = tempDir();
  const effects = join(dir, 'effects.jsonl');
  writeFileSync(effects, '');
  return { flags: ['--db', join(dir, 'b.db'), ...AGENT], env: { HUMAN_EFFECTS: effects }, effects, dir };
}

/** The run a `baton run --json` printed last (its summary). */
const summaryRun = (outcome: CliOutcome) => (jsonLines(outcome.stdout).at(-1) as { run: Json }).run;

describe('pause and resume on the command line', () => {
  it('in process: a pause asked of a waiting run is reached after its approval, and resume drives it to its end', async () => {
    const { flags, env, effects } = place();
    const waiting = summaryRun(await baton(['run', 'send', '--json', ...flags], { env }));
    expect(waiting).toMatchObject({ status: 'waiting_human', wait_reason: 'approval' });

    const asked = await baton(['pause', waiting.id, '--reason', 'audit first', ...flags], { env });
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain(`Pause requested: run ${waiting.id} stops before its next step.`);
    expect(asked.stdout).toMatch(/^Run \S+ waiting_human, pause requested, approval \S+$/m);
    const shown = await baton(['show', waiting.id, ...flags.slice(0, 2)], { env });
    expect(shown.stdout).toMatch(/^ {2}pausing {3}asked by cli:\S+: audit first; it stops before its next step$/m);

    // The approved call runs; the run stops before its next step.
    const approved = await baton(['approve', waiting.id, ...flags], { env });
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toMatch(
      /^Run \S+ waiting_human, paused \(\S+\.pause\.1\): 'baton resume \S+' \(with the same --db or --url\) lets it go on$/m,
    );
    expect(readJsonLines(effects)).toHaveLength(1);
    const events = await baton(['events', waiting.id, ...flags.slice(0, 2)], { env });
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).toMatch(/pause asked by cli:\S+: audit first \(the run stops before its next step\)/);
    expect(events.stdout).toMatch(/paused before step 1 by cli:\S+: audit first \(resume it to go on\)/);

    const twice = await baton(['pause', waiting.id, '--json', ...flags], { env });
    expect(twice.code).toBe(1);
    expect(JSON.parse(twice.stderr)).toMatchObject({ error: { code: 'run.invalid_transition' } });

    const resumed = await baton(['resume', waiting.id, '--json', ...flags], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'succeeded', pause_requested: null });
    expect(readJsonLines(effects)).toHaveLength(1);
    const again = await baton(['resume', waiting.id, ...flags], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not paused');
  });

  it('against a server: pause and resume over HTTP, the token recorded as who paused', async () => {
    const { env, effects, dir } = place();
    const tokens = join(dir, 'tokens.json');
    writeFileSync(
      tokens,
      JSON.stringify({
        tokens: [
          { token: 'tok-ops-0123456789abcdef', tenant: 'acme', roles: ['submit', 'view'], name: 'ops' },
          { token: 'tok-alice-0123456789abcd', tenant: 'acme', roles: ['approve', 'view'], name: 'alice' },
        ],
      }),
    );
    const server = await startServe(['--port', '0', '--db', join(dir, 's.db'), ...AGENT, '--tokens', tokens], { env });
    const OPS = ['--url', server.url, '--token', 'tok-ops-0123456789abcdef'];
    const ALICE = ['--url', server.url, '--token', 'tok-alice-0123456789abcd'];
    try {
      const waiting = summaryRun(await baton(['run', 'send', '--json', ...OPS]));
      const asked = await baton(['pause', waiting.id, '--json', ...OPS]);
      expect(asked.code, asked.stderr).toBe(0);
      expect(JSON.parse(asked.stdout)).toMatchObject({ pause_requested: { by: 'ops', reason: null } });
      const forbidden = await baton(['resume', waiting.id, ...ALICE]);
      expect(forbidden.code).toBe(1);
      expect(forbidden.stderr).toContain('(auth.forbidden)');
      expect((await baton(['approve', waiting.id, ...ALICE])).code).toBe(0);
      await waitUntil(async () => {
        const shown = await baton(['show', waiting.id, '--json', ...OPS]);
        return (JSON.parse(shown.stdout) as { run: Json }).run.wait_reason === 'paused';
      }, 'the run to pause');
      const resumed = await baton(['resume', waiting.id, '--reason', 'checked', '--json', ...OPS]);
      expect(resumed.code, resumed.stderr).toBe(0);
      await waitUntil(async () => {
        const shown = await baton(['show', waiting.id, '--json', ...OPS]);
        return (JSON.parse(shown.stdout) as { run: Json }).run.status === 'succeeded';
      }, 'the run to end');
      expect(readJsonLines(effects)).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });
});
