/**
 * Compensation in the inspector, in real Chromium against a real server on loopback: a run
 * cancelled from the page with "undo its calls" shows each compensation on its timeline (the
 * calls undone newest first, the one left as it is), the report on its last state, and the
 * ledger's calls marked undone; "Reject, undo and end" does the same through an approval.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { dataOf, openPage } from '../helpers/browser.js';
import { apiClient, pollRun, startTestServer } from '../helpers/server.js';
import { createShop, readShop, SHOP_SCRIPT } from '../helpers/shop.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };

async function shopServer() {
  const server = await startTestServer({
    auth: { tokens: [] },
    runtime: (effects) => ({ planner: createScriptedPlanner(SHOP_SCRIPT), tools: createShop(effects) }),
  });
  const call = apiClient(server.url);
  const waitingRun = async () => {
    const id = (await call('POST', '/v1/runs', { input: 'handle orders A and B' })).body.id as string;
    await pollRun(call, id, (r) => r.status === 'waiting_human', scaled(30_000));
    return id;
  };
  return { server, call, waitingRun };
}

describe('inspector (Chromium, compensation)', () => {
  it('cancels with "undo its calls" from the page and shows each compensation on the timeline and in the ledger', async () => {
    const { server, call, waitingRun } = await shopServer();
    const runId = await waitingRun();
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.waitForSelector('svg.chart[data-current="waiting_human"]', WAIT);
    await page.locator('[data-testid=cancel-compensate]').check();
    await page.locator('[data-testid=cancel]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="failed"]', WAIT);

    const rows = page.locator('[data-testid=timeline] tr[data-type=compensation]');
    await expect.poll(() => rows.count(), WAIT).toBe(7);
    const texts = await rows.allTextContents();
    expect(texts[0]).toContain('undo shop.charge');
    expect(texts[1]).toMatch(/undo shop\.charge .*: undone/);
    expect(texts[2]).toMatch(/undo shop\.notify .*: left as it is — it has no compensator/);
    expect(texts[4]).toMatch(/undo shop\.archive .*: undone/);
    const last = page.locator('[data-testid=timeline] tr[data-type=state]').last();
    expect(await last.textContent()).toContain(
      'executing → failed (cancelled) — compensation: 3 undone, 1 left as they are',
    );
    // The ledger marks each call by how its compensation went.
    await page.locator('[data-tab=ledger]').click();
    const marks = await dataOf(page.locator('[data-compensation]'), 'compensation');
    expect(marks.sort()).toEqual(['skipped', 'succeeded', 'succeeded', 'succeeded']);
    expect((await call('GET', `/v1/runs/${runId}`)).body.compensation).toMatchObject({ status: 'done' });
    expect(readShop(server.effects).filter((l) => l.kind === 'refund')).toHaveLength(2);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });

  it('rejects, undoes and ends a run from its pending approval', async () => {
    const { server, call, waitingRun } = await shopServer();
    const runId = await waitingRun();
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.locator('[data-testid=reject-compensate]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="failed"]', WAIT);
    await expect.poll(() => page.locator('[data-testid=timeline] tr[data-type=compensation]').count(), WAIT).toBe(7);
    const run = (await call('GET', `/v1/runs/${runId}`)).body;
    expect(run).toMatchObject({ stop_reason: 'rejected', compensation: { reason: 'rejected', status: 'done' } });
    expect(watched.pageErrors).toEqual([]);
  });
});
