/**
 * The command line with an agent that hands the conversation to another (`handoff`): `baton run`
 * tells the handoff and the hand-back and decides the other agent's approval, `baton show` names
 * the agent of each step and, while a run is handed over, the agent on top.
 */
import { describe, expect, it } from 'vitest';
import { tempFiles } from '../helpers/temp.js';
import { baton } from './cli-child.js';

const AGENT = ['--agent', 'test/cli/fixtures/desk-agent.ts'];

describe('baton with an agent that hands over', () => {
  it('tells the handoffs, asks the approval of the agent handed to, and shows who planned each step', async () => {
    const db = ['--db', tempFiles().db];
    const waiting = await baton(['run', 'refund A1', '--json', ...AGENT, ...db]);
    expect(waiting.code, waiting.stderr).toBe(3);
    const summary = JSON.parse(waiting.stdout.trim().split('\n').at(-1)!) as {
      run: { id: string; wait_reason: string; handoff_stack: { agent: string; step: number }[] };
    };
    expect(summary.run.wait_reason).toBe('approval');
    expect(summary.run.handoff_stack).toMatchObject([{ agent: 'billing', step: 1 }]);
    const id = summary.run.id;
    const shown = await baton(['show', id, ...db]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('handoffs  desk → billing (step 1); billing plans next');
    expect(shown.stdout).toContain('1  [billing] billing.refund');

    const approved = await baton(['approve', id, ...AGENT, ...db]);
    expect(approved.code, approved.stderr).toBe(0);
    const events = await baton(['events', id, ...db]);
    expect(events.stdout).toMatch(/desk hands over to billing: a refund/);
    expect(events.stdout).toMatch(/billing hands back to desk: refund done/);
    expect(events.stdout).toMatch(/step 1 \[billing\]: billing\.refund/);
    const done = await baton(['show', id, ...db]);
    expect(done.stdout).toContain('desk: {"refunded":"A1"}');
    expect(done.stdout).not.toContain('handoffs');
    expect(done.stdout).toMatch(/0 {2}\[desk\] handoff\.billing[\s\S]*3 {2}\[desk\] final answer/);
  });
});
