/**
 * Forking in the inspector, in real Chromium against a real server on loopback: "Fork from
 * here" on a step of the Steps tab with its decision edited (the demo's file list cut to one:
 * the fork, opened at once, archives that file only, once, after its approval), on a step's
 * row of the timeline, and in replay at the step the scrubber shows; each run shows where it was
 * forked from, and the source lists its forks.
 */
import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openPage, type WatchedPage } from '../helpers/browser.js';
import { startDemoServer } from '../helpers/demo-server.js';
import { apiClient, type Json } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';
import { eventsOf } from '../helpers/runtime.js';

const WAIT = { timeout: scaled(30_000) };

function expectClean(watched: WatchedPage) {
  expect(watched.pageErrors).toEqual([]);
  expect(watched.consoleErrors).toEqual([]);
  expect(watched.outside()).toEqual([]);
}

/**
 * The text of a fork form's decision once the form has filled it: a <details> element's `toggle`
 * event, which fills it, comes a task after the click that opened it.
 */
async function filledValue(field: Locator): Promise<string> {
  await expect.poll(() => field.inputValue(), WAIT).not.toBe('');
  return field.inputValue();
}

/** The run the page shows, from its URL. */
async function shownRun(watched: WatchedPage, not: string): Promise<string> {
  const { page } = watched;
  await page.waitForFunction(
    (old) => !(globalThis as unknown as { location: { hash: string } }).location.hash.endsWith(encodeURIComponent(old)),
    not,
    WAIT,
  );
  return decodeURIComponent(new URL(page.url()).hash.replace('#/runs/', ''));
}

describe('forks in the inspector', () => {
  it('forks a waiting demo run from its approval step with an edited list: the fork opens and archives that one file', async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    const source = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body as Json;
    expect(source.status).toBe('waiting_human');
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${source.id}`);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    await page.locator('[data-tab=steps]').click();
    const step = page.locator('[data-testid=steps] details.step[data-step="2"]');
    await step.locator('summary').first().click();
    const fork = step.locator('[data-testid=fork-steps]');
    await fork.locator('summary').click();
    const decision = fork.getByLabel('Decision of step 2 for the fork, editable');
    await decision.waitFor(WAIT);
    const proposed = JSON.parse(await filledValue(decision)) as { calls: { args: { files: string[] } }[] };
    expect(proposed.calls[0]!.args.files).toEqual(['service-b.json', 'service-d.json', 'service-f.json']);
    proposed.calls[0]!.args.files = ['service-d.json'];
    await decision.fill(JSON.stringify(proposed));
    await fork.locator('[data-testid=fork-submit]').click();

    const forkId = await shownRun(watched, source.id);
    await page.waitForSelector(`section.run[data-run="${forkId}"][data-synced-seq]`, WAIT);
    const from = page.locator('[data-testid=forked-from]');
    await from.waitFor(WAIT);
    expect(await from.textContent()).toBe(`Forked from ${source.id} at step 2`);
    await page.locator('[data-testid=pending-approval] [data-testid=approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    const archives = (await eventsOf(server.runtime, forkId)).filter(
      (e) => e.type === 'action' && e.data.tool === 'configs.archive',
    );
    expect(archives.map((e) => e.data.args)).toEqual([{ files: ['service-d.json'] }]);
    const calls = (await call('GET', `/v1/runs/${forkId}/tool-calls`)).body.tool_calls as Json[];
    expect(calls.filter((c) => c.step_index < 2).every((c) => typeof c.copied_from === 'string')).toBe(true);
    expect(calls.find((c) => c.tool === 'configs.archive')).toMatchObject({
      copied_from: null,
      attempts: 1,
      result: { content: { archived: ['service-d.json'], missing: [] } },
    });

    // The source, untouched and still waiting, lists its fork; its link opens the source.
    await from.locator('a').click();
    await page.waitForSelector(`section.run[data-run="${source.id}"][data-synced-seq]`, WAIT);
    const forks = page.locator('[data-testid=forks]');
    await forks.waitFor(WAIT);
    expect(await forks.textContent()).toBe(`Forks (1): ${forkId} at step 2 (succeeded)`);
    expect((await call('GET', `/v1/runs/${source.id}`)).body).toMatchObject({ status: 'waiting_human' });
    expectClean(watched);
  });

  it('forks from a step of the timeline and from the replay at the step it shows', async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    const source = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body as Json;
    await call('POST', `/v1/runs/${source.id}/approvals/${source.pending_approval_id as string}`, {
      decision: 'approve',
    });
    await expect.poll(async () => (await call('GET', `/v1/runs/${source.id}`)).body.status, WAIT).toBe('succeeded');
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${source.id}`);
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);

    // The timeline: the row of step 3 (the final answer), forked as it is: the planner decides it again.
    const row = page.locator('[data-testid=timeline] tr[data-type=step]').filter({ hasText: 'step 3:' });
    const control = row.locator('[data-testid=fork-timeline]');
    await control.locator('summary').click();
    const text = await filledValue(control.getByLabel('Decision of step 3 for the fork, editable'));
    expect(JSON.parse(text)).toMatchObject({ type: 'final' });
    await control.locator('[data-testid=fork-submit]').click();
    const fromTimeline = await shownRun(watched, source.id);
    await page.waitForSelector(
      `section.run[data-run="${fromTimeline}"] [data-testid=run-status][data-status="succeeded"]`,
      WAIT,
    );
    expect((await call('GET', `/v1/runs/${fromTimeline}`)).body.forked_from).toEqual({ run_id: source.id, step: 3 });

    // Replay: back on the source, scrubbed to the event that planned step 1, then forked there.
    await page.goto(`${server.url}/inspector/#/runs/${source.id}`);
    await page.waitForSelector(`section.run[data-run="${source.id}"][data-synced-seq]`, WAIT);
    const events = await eventsOf(server.runtime, source.id);
    const planned = events.find((e) => e.type === 'step' && e.data.step_index === 1)!;
    await page.locator('[data-testid=scrubber]').fill(String(planned.seq));
    const replay = page.locator('[data-testid=replay-fork] [data-testid=fork-replay]');
    await replay.waitFor(WAIT);
    expect(await replay.getAttribute('data-step')).toBe('1');
    await replay.locator('summary').click();
    await filledValue(replay.getByLabel('Decision of step 1 for the fork, editable'));
    await replay.locator('[data-testid=fork-submit]').click();
    const fromReplay = await shownRun(watched, source.id);
    const forked = (await call('GET', `/v1/runs/${fromReplay}`)).body;
    expect(forked.forked_from).toEqual({ run_id: source.id, step: 1 });
    expectClean(watched);
  });
});
