/**
 * The command line with a tool whose work goes on elsewhere (a task): `baton run` follows the run
 * through its task wait without asking anyone, prints the wait, the progress and the work's end,
 * and `baton events` tells the same from the log.
 */
import { describe, expect, it } from 'vitest';
import { tempFiles } from '../helpers/temp.js';
import { baton } from './cli-child.js';

const AGENT = ['--agent', 'test/cli/fixtures/kiln-agent.ts'];

describe('baton with a tool whose work goes on elsewhere', () => {
  it('follows the run through its task wait to the end, asking no one', async () => {
    const db = ['--db', tempFiles().db];
    const ran = await baton(['run', 'fire three pots', ...AGENT, ...db]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('waiting for its work elsewhere to end');
    expect(ran.stdout).toContain('kiln.fire goes on elsewhere: the run waits for it');
    expect(ran.stdout).toContain('kiln.fire: heating');
    expect(ran.stdout).toContain("kiln.fire's work elsewhere ended: succeeded");
    expect(ran.stdout).toContain('Done: {"fired":3}');
    expect(ran.stdout).not.toMatch(/approve\?|\[y\/n\]/i);

    const id = /Run (\S+) succeeded/.exec(ran.stdout)![1]!;
    const events = await baton(['events', id, ...db]);
    expect(events.code, events.stderr).toBe(0);
    expect(events.stdout).toMatch(/executing → waiting_human \(waiting for its work elsewhere to end\)/);
    expect(events.stdout).toMatch(/waiting_human → executing/);
  });
});
