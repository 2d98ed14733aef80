/**
 * A tree of runs in the inspector, in real Chromium against a real server on loopback: a parent
 * waiting on its child shows the child (a link), and the approval the child waits on, which is
 * approved from the parent's page; the child shows its parent (a link back), and once both have
 * ended the parent lists the child as succeeded and the child's effect happened once.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openPage } from '../helpers/browser.js';
import { scaled } from '../helpers/limits.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';
import { treeOptions } from '../helpers/tree-agents.js';

const WAIT = { timeout: scaled(30_000) };

describe('a tree of runs in the inspector', () => {
  it('shows the child and its approval on the parent, approves it there, and links both ways', async () => {
    const server = await startTestServer({
      auth: { tokens: [] },
      runtime: (effects) => {
        const { planner, tools } = treeOptions('', effects);
        return { planner, tools };
      },
    });
    const call = apiClient(server.url);
    const parent = (await call('POST', '/v1/runs?wait=true', { input: 'tidy up' })).body as Json;
    expect(parent).toMatchObject({ status: 'waiting_human', wait_reason: 'child' });
    const child = `${parent.id}.s0.c0.child`;
    expect(parent.child_wait).toMatchObject({ run_id: child, asking: { run_id: child, wait_reason: 'approval' } });

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${parent.id}`);
    const wait = page.locator('[data-testid=child-wait]');
    await wait.waitFor(WAIT);
    expect(await wait.getAttribute('data-child')).toBe(child);
    const asking = page.locator('[data-testid=child-asking]');
    expect(await asking.getAttribute('data-approval')).toBe(`${child}.s0.approval`);
    expect(await page.locator(`[data-testid=children] [data-child="${child}"]`).getAttribute('data-status')).toBe(
      'waiting_human',
    );
    // What the approval is for: the call and its arguments, as the child would run them.
    expect(await page.locator('[data-testid=child-asking-calls] li').allTextContents()).toEqual([
      'files.archive {"file":"a.json"}',
    ]);
    // The parent's own wait is no approval a person gives: its page offers none.
    expect(await page.locator('[data-testid=pending-approval]').count()).toBe(0);

    await page.locator('[data-testid=child-approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector(`[data-testid=children] [data-child="${child}"][data-status="succeeded"]`, WAIT);
    expect(await page.locator('[data-testid=answer]').textContent()).toContain('parent: clerk: {"archived":"a.json"}');
    expect(readFileSync(server.effects, 'utf8').trim().split('\n')).toEqual([`a.json ${child}.s0.c0`]);

    // The child links back to its parent.
    await page.locator(`[data-testid=children] a[href="#/runs/${encodeURIComponent(child)}"]`).click();
    await page.waitForSelector('[data-testid=parent-run]', WAIT);
    expect(await page.locator('[data-testid=parent-run] a').getAttribute('href')).toBe(
      `#/runs/${encodeURIComponent(parent.id)}`,
    );
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    // Its timeline tells the approval it waited for; the parent's tells the child's start and end.
    await page.locator(`[data-testid=parent-run] a`).click();
    await page.waitForSelector('[data-testid=timeline] tr[data-type=child]', WAIT);
    const told = await page.locator('[data-testid=timeline] tr[data-type=child]').allTextContents();
    expect(told.join(' | ')).toMatch(/handed agent\.clerk to agent clerk.*child run .* succeeded/);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
