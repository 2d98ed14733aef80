/**
 * The schedules page of the inspector, in real Chromium against a real server on loopback: a
 * schedule made over the API is listed with its next tick and its runs as they tick (its last run
 * linked); Pause stops it, Resume starts it again, Run now opens the run it started, Delete asks
 * first and removes it.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { openPage } from '../helpers/browser.js';
import { scaled } from '../helpers/limits.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';

const WAIT = { timeout: scaled(30_000) };

describe('schedules in the inspector', () => {
  it('lists a schedule as it ticks, and pauses, resumes, triggers and deletes it with its buttons', async () => {
    const server = await startTestServer({
      auth: { tokens: [] },
      runtime: () => ({ tools: [], planner: createScriptedPlanner(() => ({ type: 'final', answer: 'ticked' })) }),
    });
    const call = apiClient(server.url);
    expect((await call('POST', '/v1/schedules', { id: 'heartbeat', every: 1_000, input: 'beat' })).status).toBe(201);
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/`);
    await page.click('[data-testid=nav-schedules]');
    const row = page.locator('[data-testid=schedule-row][data-id=heartbeat]');
    await row.waitFor(WAIT);
    expect(await row.textContent()).toContain('every 1 s');
    // Its runs count up as it ticks, and the last one is linked.
    await expect
      .poll(async () => Number(await row.locator('[data-testid=schedule-runs]').textContent()), WAIT)
      .toBeGreaterThanOrEqual(2);
    expect(await row.locator('[data-testid=schedule-last-run]').getAttribute('href')).toMatch(/^#\/runs\/run_/);

    await row.locator('[data-testid=schedule-pause]').click();
    await page.waitForSelector('[data-testid=schedule-row][data-id=heartbeat][data-status=paused]', WAIT);
    expect(((await call('GET', '/v1/schedules/heartbeat')).body as Json).status).toBe('paused');
    expect(await row.locator('[data-testid=schedule-next]').textContent()).toBe('—');
    await row.locator('[data-testid=schedule-resume]').click();
    await page.waitForSelector('[data-testid=schedule-row][data-id=heartbeat][data-status=active]', WAIT);

    await row.locator('[data-testid=schedule-trigger]').click();
    await page.waitForURL(/#\/runs\/run_/, WAIT);
    const runId = decodeURIComponent(page.url().split('#/runs/')[1]!);
    expect(((await call('GET', `/v1/runs/${runId}`)).body as Json).metadata).toMatchObject({
      'baton.schedule': 'heartbeat',
    });

    await page.goto(`${server.url}/inspector/#/schedules`);
    await row.waitFor(WAIT);
    page.once('dialog', (dialog) => void dialog.accept());
    await row.locator('[data-testid=schedule-delete]').click();
    await page.waitForSelector('text=No schedules.', WAIT);
    expect(((await call('GET', '/v1/schedules/heartbeat')).body as Json).error.code).toBe('schedule.not_found');
  });
});
