/**
 * The command line with agents that call agents (an agent module whose tool is another agent):
 * `baton run` follows the child run and decides its approval, `baton show` names the tree, and
 * a waiting parent is approved by its own id with the child's approval.
 */
import { describe, expect, it } from 'vitest';
import { tempFiles } from '../helpers/temp.js';
import { baton } from './cli-child.js';

const AGENT = ['--agent', 'test/cli/fixtures/office-agent.ts'];

describe('baton with an agent that calls an agent', () => {
  it('runs the child, asks its approval, and shows the tree', async () => {
    const db = ['--db', tempFiles().db];
    const ran = await baton(['run', 'tidy up', '--approve', ...AGENT, ...db]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/hand agent\.clerk to agent clerk \(run run_\S+\.s0\.c0\.child\)/);
    expect(ran.stdout).toMatch(/approval needed: files\.archive \{"file":"a\.json"\}/);
    expect(ran.stdout).toContain('office: clerk: {"archived":"a.json"}');
    const parent = /Run (run_[a-z0-9]+) succeeded/.exec(ran.stdout)?.[1];
    expect(parent, ran.stdout).toBeDefined();

    const shown = await baton(['show', parent!, ...db]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`children  ${parent}.s0.c0.child (agent clerk, succeeded)`);
    const child = await baton(['show', `${parent}.s0.c0.child`, ...db]);
    expect(child.stdout).toContain(`parent    ${parent} (its call ${parent}.s0.c0)`);
  });

  it("leaves a waiting parent that names the child's approval, and approves it on the parent's id", async () => {
    const db = ['--db', tempFiles().db];
    const waiting = await baton(['run', 'tidy up', '--json', ...AGENT, ...db]);
    expect(waiting.code, waiting.stderr).toBe(3);
    const summary = JSON.parse(waiting.stdout.trim().split('\n').at(-1)!) as {
      run: { id: string; wait_reason: string; child_wait: { asking: { pending_approval_id: string } } };
    };
    expect(summary.run.wait_reason).toBe('child');
    const approvalId = summary.run.child_wait.asking.pending_approval_id;
    expect(approvalId).toBe(`${summary.run.id}.s0.c0.child.s0.approval`);
    // As the hint says: the parent's id alone finds the approval its child waits on.
    expect(waiting.stderr).toContain(`Decide with 'baton approve ${summary.run.id}`);
    const approved = await baton(['approve', summary.run.id, ...AGENT, ...db]);
    expect(approved.code, approved.stderr).toBe(0);
    const shown = await baton(['show', summary.run.id, '--json', ...db]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ run: { status: 'succeeded' } });
  });
});
