/**
 * Metadata and tags on the command line, from the built CLI: `baton run --metadata k=v --tag t`
 * keeps them on the run; `baton runs --metadata --tag --failure-code --since` finds runs by them,
 * in process on a database file and against `baton serve`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Json } from '../helpers/server.js';
import { tempDir } from '../helpers/temp.js';
import { baton, jsonLines, startServe, type CliOutcome } from './cli-child.js';

const AGENT = ['--agent', 'test/cli/fixtures/human-agent.ts'];

/** The run a `baton run --json` printed last (its summary). */
const summaryRun = (outcome: CliOutcome) => (jsonLines(outcome.stdout).at(-1) as { run: Json }).run;

/** The ids `baton runs --json` listed. */
const listed = (outcome: CliOutcome) => (JSON.parse(outcome.stdout) as { runs: Json[] }).runs.map((run) => run.id);

describe('metadata and tags on the command line', () => {
  it('keeps them on the runs it starts and finds runs by them, in process and against a server', async () => {
    const dir = tempDir();
    const env = { HUMAN_EFFECTS: join(dir, 'effects.jsonl') };
    writeFileSync(env.HUMAN_EFFECTS, '');
    const local = ['--db', join(dir, 'b.db')];
    const server = await startServe(['--port', '0', '--db', join(dir, 's.db'), ...AGENT], { env });
    try {
      for (const target of [local, ['--url', server.url]]) {
        const driving = target === local ? [...target, ...AGENT] : target;
        const start = (customer: string, tags: string[]) =>
          baton(
            [
              'run',
              'read the notes',
              '--json',
              '--metadata',
              `customer=${customer}`,
              '--metadata',
              'tier=2',
              ...tags.flatMap((t) => ['--tag', t]),
              ...driving,
            ],
            { env },
          );
        const a = summaryRun(await start('acme', ['nightly']));
        const b = summaryRun(await start('globex', ['nightly', 'billing']));
        expect(a).toMatchObject({ status: 'succeeded', metadata: { customer: 'acme', tier: '2' }, tags: ['nightly'] });
        const runs = (...flags: string[]) => baton(['runs', '--json', ...flags, ...target], { env });
        expect(listed(await runs('--tag', 'nightly'))).toEqual([b.id, a.id]);
        expect(listed(await runs('--tag', 'nightly', '--tag', 'billing'))).toEqual([b.id]);
        expect(listed(await runs('--metadata', 'customer=acme', '--metadata', 'tier=2'))).toEqual([a.id]);
        expect(listed(await runs('--since', '1h', '--status', 'succeeded'))).toEqual([b.id, a.id]);
        expect(listed(await runs('--failure-code', 'tool.failed'))).toEqual([]);
        const shown = await baton(['show', String(b.id), ...target], { env });
        expect(shown.stdout).toMatch(/^ {2}metadata {2}\{"customer":"globex","tier":"2"\}$/m);
        expect(shown.stdout).toMatch(/^ {2}tags {6}nightly, billing$/m);
        const table = await baton(['runs', '--tag', 'billing', ...target], { env });
        expect(table.stdout).toContain(String(b.id));
        const bad = await baton(['runs', '--metadata', 'no-equals', ...target], { env });
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain("--metadata takes key=value, not 'no-equals'");
        const twice = await baton(['runs', '--metadata', 'a=1', '--metadata', 'a=2', ...target], { env });
        expect([twice.code, twice.stderr]).toEqual([
          2,
          expect.stringContaining('--metadata a is given more than once'),
        ]);
        const ancient = await baton(['runs', '--since', '99999d', ...target], { env });
        expect([ancient.code, ancient.stderr]).toEqual([
          2,
          expect.stringContaining('--since 99999d reaches before 1970'),
        ]);
        const refused = await baton(['runs', '--tag', 'has space', ...target], { env });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('(input.invalid)');
      }
    } finally {
      await server.stop();
    }
  });
});
