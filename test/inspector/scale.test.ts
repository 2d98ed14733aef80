/**
 * The inspector at size, in Chromium: a list over 1,000 runs is paged (50 rows, one live stream
 * for all of them), and a run of 500+ events renders and scrubs. Times are measured in the
 * browser and printed for the record, never asserted (a busy machine is slow, not wrong).
 */
import { describe, expect, it } from 'vitest';
import { dataOf, openPage } from '../helpers/browser.js';
import { startTestServer } from '../helpers/server.js';
import { storeOf } from '../../src/runtime/internals.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(60_000) };
const RUNS = 1_000;
const LONG_STEPS = 110;

describe('inspector at size (Chromium)', () => {
  it('pages a list of 1,000 runs and renders a run of 500+ events', { timeout: scaled(240_000) }, async () => {
    const server = await startTestServer({ auth: { tokens: [] } });
    const { runtime } = server;
    for (let i = 0; i < RUNS; i += 1) await runtime.start({ input: 'hello' });
    const long = await runtime.start({ input: `write:${LONG_STEPS}`, options: { maxSteps: LONG_STEPS + 5 } });
    await runtime.wait(long.id);
    for (const run of (await runtime.list({ limit: 200 })).runs) await runtime.wait(run.id);
    const events = (await storeOf(runtime).listEvents(long.id, 0, 100_000)).length;
    expect(events).toBeGreaterThanOrEqual(500);

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/`);
    await page.waitForSelector('[data-testid=runs-body] tr[data-run]', WAIT);
    const listMs = await page.evaluate(() => performance.now());
    expect(await page.locator('[data-testid=runs-body] tr[data-run]').count()).toBe(50);
    expect(await page.locator('[data-testid=page-info]').textContent()).toBe('page 1 · 50 runs');
    const firstPage = await dataOf(page.locator('[data-testid=runs-body] tr[data-run]'), 'run');
    const pageStart = await page.evaluate(() => performance.now());
    await page.locator('[data-testid=page-next]').click();
    await page.waitForSelector('[data-testid=page-info] >> text=page 2', WAIT);
    const pageMs = (await page.evaluate(() => performance.now())) - pageStart;
    const secondPage = await dataOf(page.locator('[data-testid=runs-body] tr[data-run]'), 'run');
    expect(secondPage).toHaveLength(50);
    expect(secondPage.filter((id) => firstPage.includes(id))).toEqual([]);
    // One stream for the whole list, however many runs there are.
    expect(watched.requests.filter((url) => url.includes('/v1/events')).length).toBe(1);
    expect(watched.requests.filter((url) => /\/v1\/runs\/[^/]+\/events/.test(url))).toEqual([]);

    const runStart = await page.evaluate(() => performance.now());
    await page.evaluate(`location.hash = '#/runs/${long.id}'`);
    await page.waitForSelector(`[data-testid=timeline] tr.event[data-seq="${events}"]`, WAIT);
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    const runMs = (await page.evaluate(() => performance.now())) - runStart;
    expect(await page.locator('[data-testid=timeline] tr.event').count()).toBe(events);

    const scrubTimes: number[] = [];
    for (const seq of [Math.floor(events / 4), Math.floor(events / 2), events - 1]) {
      const t0 = await page.evaluate(() => performance.now());
      await page.locator('[data-testid=scrubber]').fill(String(seq));
      await page.waitForSelector(`[data-testid=replay-info][data-seq="${seq}"]`, WAIT);
      scrubTimes.push((await page.evaluate(() => performance.now())) - t0);
    }
    console.log(
      `inspector timings: list of ${RUNS + 1} runs first paint ${listMs.toFixed(0)} ms after navigation, next page ${pageMs.toFixed(0)} ms; ` +
        `run of ${events} events rendered in ${runMs.toFixed(0)} ms; scrub ${scrubTimes.map((t) => t.toFixed(0)).join(' / ')} ms`,
    );
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
