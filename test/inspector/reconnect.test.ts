/**
 * The inspector and crashes. The server (a real child process) is SIGKILLed while the page shows
 * a waiting run, restarted on the same port and file, and the run moves on while the page is
 * still away: the page reconnects by itself, asks for what it missed (`?after=`), and shows every
 * event once. And a run whose process was SIGKILLed mid-call shows where it was resumed and how
 * the interrupted call was resolved.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { createServer } from '../../src/server/index.js';
import { dataOf, numbersOf, openPage } from '../helpers/browser.js';
import { crashPlanner, runChild } from '../helpers/crash-scenario.js';
import { readEffects, createWorld } from '../helpers/world.js';
import { apiClient, pollRun } from '../helpers/server.js';
import { startServerChild } from '../helpers/server-process.js';
import { tempFiles } from '../helpers/temp.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };
const DEV = { BATON_TOKENS: '', BATON_TOKENS_FILE: '' };

function storedSeqs(db: string, runId: string): number[] {
  const sqlite = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const rows = sqlite.prepare('SELECT seq FROM events WHERE run_id = ? ORDER BY seq').all(runId) as { seq: number }[];
    return rows.map((row) => row.seq);
  } finally {
    sqlite.close();
  }
}

describe('inspector reconnects after the server is killed', () => {
  it('shows the events it missed, none twice, without a reload', { timeout: scaled(120_000) }, async () => {
    const files = tempFiles();
    let server = await startServerChild(files, DEV);
    const port = Number(new URL(server.url).port);
    const call = apiClient(server.url);
    const started = await call('POST', '/v1/runs?wait=true', { input: 'mail' });
    expect(started.body.status).toBe('waiting_human');
    const runId: string = started.body.id;

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.waitForSelector('svg.chart[data-current="waiting_human"]', WAIT);
    await page.locator('[data-testid=pending-approval]').waitFor(WAIT);
    await page.evaluate("window.marker = 'same page'");
    const seen = storedSeqs(files.db, runId);
    await expect.poll(() => page.locator('[data-testid=timeline] tr.event').count(), WAIT).toBe(seen.length);

    // Hold the page's next stream until the run has moved on, so it must catch up by `after`.
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    await page.route('**/v1/runs/*/events*', async (route) => {
      await gate;
      await route.continue();
    });

    const killed = await server.kill('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    await page.waitForSelector('#connection[data-status="reconnecting"]', WAIT);

    server = await startServerChild({ ...files, port }, DEV);
    expect(server.url).toBe(`http://127.0.0.1:${port}`);
    const waiting = await call('GET', `/v1/runs/${runId}`);
    expect(waiting.body.status).toBe('waiting_human');
    const decided = await call('POST', `/v1/runs/${runId}/approvals/${waiting.body.pending_approval_id}`, {
      decision: 'approve',
      reason: 'while the page was away',
    });
    expect(decided.status).toBe(200);
    await pollRun(call, runId, (run) => run.status === 'succeeded', scaled(30_000));
    const all = storedSeqs(files.db, runId);
    expect(all.length).toBeGreaterThan(seen.length);

    openGate();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('svg.chart[data-current="succeeded"]', WAIT);
    await expect.poll(() => page.locator('[data-testid=timeline] tr.event').count(), WAIT).toBe(all.length);
    const shown = await numbersOf(page.locator('[data-testid=timeline] tr.event'), 'seq');
    expect(shown).toEqual(all);
    await expect.poll(() => page.locator('.decisions li').textContent(), WAIT).toContain('while the page was away');
    // It resumed from where it was, and it is the same page.
    const streams = watched.requests.filter((url) => url.includes(`/v1/runs/${runId}/events`));
    expect(streams[0]).toContain('after=0');
    expect(streams.some((url) => url.includes(`after=${seen.length}`))).toBe(true);
    expect(await page.evaluate('window.marker')).toBe('same page');
    expect(watched.pageErrors).toEqual([]);
    expect(watched.outside()).toEqual([]);
  });
});

describe('inspector after a crash mid-call', () => {
  it(
    'marks where the run was resumed and how the interrupted call was resolved',
    { timeout: scaled(120_000) },
    async () => {
      const files = tempFiles();
      const tool = 'world.unsafe';
      const crashed = await runChild({ db: files.db, effects: files.effects, tool }, 'tool.started=kill');
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
      const runtime = createRuntime({
        database: files.db,
        planner: crashPlanner(tool),
        tools: createWorld(files.effects).all(),
      });
      const listening = await createServer({ runtime, auth: { tokens: [] } }).listen({ host: '127.0.0.1', port: 0 });
      try {
        const runId = (await runtime.list()).runs[0]!.id;
        await runtime.wait(runId);
        const watched = await openPage(listening.url);
        const { page } = watched;
        await page.goto(`${listening.url}/inspector/#/runs/${runId}`);
        // The unsafe call's outcome is unknown: the page says so and asks a human.
        const marker = page.locator('[data-testid=timeline] tr.resumed');
        await marker.waitFor(WAIT);
        expect(await marker.textContent()).toContain('Resumed after the process stopped');
        const badge = page.locator('[data-testid=timeline] [data-recovery="to_human"]');
        await badge.waitFor(WAIT);
        expect(await badge.textContent()).toContain('sent to a human');
        const pending = page.locator('[data-testid=pending-approval]');
        await pending.waitFor(WAIT);
        expect(await pending.textContent()).toContain('the outcome of this call is unknown');
        await page.locator('[data-testid=approve]').click();
        await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
        await page.locator('[data-tab=ledger]').click();
        const row = page.locator('[data-testid=ledger] tr[data-call]');
        await expect.poll(() => row.getAttribute('data-status'), WAIT).toBe('succeeded');
        expect(await dataOf(row.locator('[data-recovery]'), 'recovery')).toEqual(['to_human', 'human_retry']);
        // Killed before its effect, run once more by a human's choice: one effect in all.
        expect(readEffects(files.effects)).toHaveLength(1);
        expect(watched.pageErrors).toEqual([]);
        expect(watched.consoleErrors).toEqual([]);
      } finally {
        await listening.close();
        await runtime.close();
      }
    },
  );
});
