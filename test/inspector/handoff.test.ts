/**
 * Handoffs in the inspector, in real Chromium against a real server on loopback: a run whose
 * triage agent handed the conversation to billing shows the handoff stack (billing on top) while
 * billing's refund waits for approval, names the agent that planned each step, and tells the
 * handoff and the hand-back in its timeline; once approved, the stack is empty again.
 */
import { describe, expect, it } from 'vitest';
import { openPage } from '../helpers/browser.js';
import { handoffOptions } from '../helpers/handoff-agents.js';
import { scaled } from '../helpers/limits.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';

const WAIT = { timeout: scaled(30_000) };

describe('handoffs in the inspector', () => {
  it("shows the agent on top of the handoff stack and each step's agent", async () => {
    const server = await startTestServer({
      auth: { tokens: [] },
      runtime: (effects) => {
        const { planner, tools, agent } = handoffOptions('', effects);
        return { planner, tools, agent };
      },
    });
    const call = apiClient(server.url);
    const run = (await call('POST', '/v1/runs?wait=true', { input: 'refund A1' })).body as Json;
    expect(run).toMatchObject({ status: 'waiting_human', wait_reason: 'approval' });
    expect(run.handoff_stack).toEqual([
      {
        agent: 'billing',
        step: 1,
        tool_call_id: `${run.id}.s0.c0`,
        tools: ['billing.refund'],
        instructions_sha256: expect.stringMatching(/^[0-9a-f]{16}$/),
      },
    ]);

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${run.id}`);
    const stack = page.locator('[data-testid=handoff-stack]');
    await stack.waitFor(WAIT);
    expect(await stack.textContent()).toMatch(/triage → billing \(since step 1\).*billing plans the next step/);
    await page.waitForSelector('[data-testid=steps] details.step[data-step="1"] [data-agent=billing]', {
      state: 'attached',
      ...WAIT,
    });
    expect(await page.locator('[data-testid=steps] details.step[data-step="0"] [data-agent]').textContent()).toBe(
      'triage',
    );

    await page.locator('[data-testid=approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('[data-testid=handoff-stack]', { state: 'detached', ...WAIT });
    await page.waitForSelector('[data-testid=steps] details.step[data-step="3"] [data-agent=triage]', {
      state: 'attached',
      ...WAIT,
    });
    const agents = await page.locator('[data-testid=steps] details.step [data-agent]').allTextContents();
    expect(agents).toEqual(['triage', 'billing', 'billing', 'triage']);
    const told = await page.locator('[data-testid=timeline] tr[data-type=handoff]').allTextContents();
    expect(told.join(' | ')).toMatch(/handed over: triage → billing.* \| .*handed back: billing → triage/);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
