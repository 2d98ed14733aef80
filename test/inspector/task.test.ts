/**
 * A run waiting on its call's work elsewhere (a task), in real Chromium against a real server on
 * loopback: the page says what the run waits for (no Approve: no person decides it), the task's
 * progress arrives live in the timeline as the runtime polls it, and its end moves the run on.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { openPage } from '../helpers/browser.js';
import { scaled } from '../helpers/limits.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait-until.js';

const WAIT = { timeout: scaled(30_000) };

describe('a task wait in the inspector', () => {
  it('shows the wait, its progress live, and the run going on when the work ends', async () => {
    let polls = 0;
    let done = false;
    const render = defineTool({
      name: 'render',
      description: 'Renders a video elsewhere',
      input: z.object({ scene: z.string() }),
      effect: 'idempotent',
      risk: 'low',
      execute: async ({ scene }, ctx) => {
        await ctx.saveHandle?.({ job: `job-${scene}` });
        await ctx.progress?.({ message: 'queued' });
        ctx.detach?.({ pollAfterMs: 200 });
        return 'never here';
      },
      pollHandle: async (handle) => {
        polls += 1;
        if (done) return { done: true, output: `rendered ${(handle as { job: string }).job}` };
        return {
          done: false,
          pollAfterMs: 200,
          progress: { progress: Math.min(polls, 9), total: 10, message: 'rendering' },
        };
      },
    });
    const server = await startTestServer({
      auth: { tokens: [] },
      runtime: () => ({
        tools: [render],
        planner: createScriptedPlanner([
          { type: 'tool_calls', calls: [{ tool: 'render', args: { scene: 'intro' } }] },
          (request) => ({
            type: 'final',
            answer: String(request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? ''),
          }),
        ]),
      }),
    });
    const call = apiClient(server.url);
    const run = (await call('POST', '/v1/runs', { input: 'render the intro' })).body as Json;
    await waitUntil(async () => {
      const now = (await call('GET', `/v1/runs/${String(run.id)}`)).body as Json;
      return now.wait_reason === 'task';
    }, 'the run to wait for its task');

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${String(run.id)}`);
    await page.waitForSelector('[data-testid=run-status][data-status="waiting_human"]', WAIT);
    const wait = page.locator('[data-testid=task-wait]');
    await wait.waitFor(WAIT);
    expect(await wait.textContent()).toContain('Waits for the work render left running elsewhere');
    expect(await wait.textContent()).toContain('job-intro');
    expect(await page.locator('[data-testid=approve]').count()).toBe(0);
    // The timeline says the run waits, then the polls' progress comes in live (a count each time).
    await page.waitForSelector('[data-testid=timeline] tr[data-type=task]', { state: 'attached', ...WAIT });
    const seen = await page.locator('[data-testid=timeline] tr[data-type=progress]').count();
    const progressRows = page.locator('[data-testid=timeline] tr[data-type=progress]');
    await expect.poll(() => progressRows.count(), WAIT).toBeGreaterThan(seen);
    const progress = await progressRows.allTextContents();
    expect(progress[0]).toContain('render under way: queued');
    expect(progress.slice(1).every((line) => /render under way \d+\/10: rendering/.test(line))).toBe(true);

    done = true;
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('[data-testid=task-wait]', { state: 'detached', ...WAIT });
    const tasks = await page.locator('[data-testid=timeline] tr[data-type=task]').allTextContents();
    expect(tasks).toHaveLength(2);
    expect(tasks[1]).toContain("render's work elsewhere ended: succeeded");
    const ended = (await call('GET', `/v1/runs/${String(run.id)}`)).body as Json;
    expect(ended).toMatchObject({ status: 'succeeded', answer: 'rendered job-intro' });
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
