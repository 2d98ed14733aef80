/**
 * An operator's pause in the inspector, in real Chromium against a real server on loopback: the
 * Pause button asks it while a call is in flight (the button says so until it is reached), the
 * call finishes, the run stops before its next step and the page shows who paused it with a
 * Resume button; Resume lets it go on to its end, live over SSE, each call run once.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createScriptedPlanner, defineTool } from '../../src/index.js';
import { openPage } from '../helpers/browser.js';
import { scaled } from '../helpers/limits.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';
import { waitUntil } from '../helpers/wait-until.js';

const WAIT = { timeout: scaled(30_000) };

describe('an operator pause in the inspector', () => {
  it('pauses a run between steps with the Pause button and resumes it with Resume', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    let runs = 0;
    const fetchPage = defineTool({
      name: 'fetch_page',
      description: 'Fetches a page (slowly)',
      input: z.object({ url: z.string() }),
      effect: 'read',
      risk: 'low',
      execute: async ({ url }) => {
        runs += 1;
        started = true;
        await gate;
        return `fetched ${url}`;
      },
    });
    const server = await startTestServer({
      auth: { tokens: [] },
      runtime: () => ({
        tools: [fetchPage],
        planner: createScriptedPlanner([
          { type: 'tool_calls', calls: [{ tool: 'fetch_page', args: { url: 'https://example.com/a' } }] },
          { type: 'final', answer: 'summarized' },
        ]),
      }),
    });
    const call = apiClient(server.url);
    const run = (await call('POST', '/v1/runs', { input: 'summarize the page' })).body as Json;
    const id = String(run.id);
    await waitUntil(async () => started, 'the call to be in flight');

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${id}`);
    const pause = page.locator('[data-testid=pause]');
    await page.waitForSelector('[data-testid=pause]:not([disabled])', WAIT);
    await pause.click();
    await page.waitForSelector('[data-testid=pause][data-state=asked]', WAIT);
    expect(await pause.textContent()).toBe('Pausing…');
    expect(((await call('GET', `/v1/runs/${id}`)).body as Json).pause_requested).toEqual({ reason: null, by: 'dev' });

    // The call in flight finishes; the run stops before its next step.
    release();
    await page.waitForSelector('[data-testid=run-status][data-status="waiting_human"]', WAIT);
    const paused = page.locator('[data-testid=paused]');
    await paused.waitFor(WAIT);
    expect(await paused.textContent()).toBe('Paused by dev');
    await page.waitForSelector('[data-testid=pause][data-state=paused]', WAIT);
    expect(await page.locator('[data-testid=approve]').count()).toBe(0);
    const rows = page.locator('[data-testid=timeline] tr[data-type=pause]');
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    expect(await rows.first().textContent()).toContain('pause asked by dev');
    const now = (await call('GET', `/v1/runs/${id}`)).body as Json;
    expect(now).toMatchObject({ wait_reason: 'paused', pause_requested: null, usage: { llm_calls: 1 } });

    await page.locator('[data-testid=decision-reason]').fill('looked fine');
    await page.locator('[data-testid=resume]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('[data-testid=paused]', { state: 'detached', ...WAIT });
    const approvals = (await call('GET', `/v1/runs/${id}/approvals`)).body as { approvals: Json[] };
    expect(approvals.approvals).toEqual([
      expect.objectContaining({
        kind: 'pause',
        status: 'approved',
        resolution: 'resume',
        decided_by: 'dev',
        reason: 'looked fine',
      }),
    ]);
    expect(runs).toBe(1);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
