/**
 * Replay in the inspector: for a finished demo run, the scrubber at every seq shows the state,
 * the edges and the ledger the stored event log implies, and scrubbing sends no request at all,
 * so no model or tool can be called again.
 */
import { describe, expect, it } from 'vitest';
import type { Planner } from '../../src/index.js';
import { dataOf, openPage } from '../helpers/browser.js';
import { startDemoServer } from '../helpers/demo-server.js';
import { apiClient } from '../helpers/server.js';
import { storeOf } from '../../src/runtime/internals.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };

interface StoredEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

/** What the log says at `seq`, computed here independently of the page's fold. */
function expectedAt(events: StoredEvent[], seq: number) {
  let status = 'pending';
  const edges: Record<string, number> = {};
  const calls: Record<string, string> = {};
  for (const event of events) {
    if (event.seq > seq) break;
    const d = event.data;
    if (event.type === 'state') {
      status = String(d.to);
      const key = `${String(d.from)}>${String(d.to)}`;
      edges[key] = (edges[key] ?? 0) + 1;
    }
    if (event.type === 'approval_request') {
      for (const c of d.tool_calls as { id: string }[]) calls[c.id] ??= 'awaiting_approval';
    }
    if (event.type === 'action') calls[String(d.tool_call_id)] = 'started';
    if (event.type === 'result') calls[String(d.tool_call_id)] = String(d.status);
  }
  return { status, edges, calls };
}

describe('inspector replay (Chromium)', () => {
  it('shows at every seq what the stored events imply, and makes no request while scrubbing', async () => {
    let plannerCalls = 0;
    const counting = (planner: Planner): Planner => ({
      ...planner,
      next: (request) => {
        plannerCalls += 1;
        return planner.next(request);
      },
    });
    const server = await startDemoServer({ planner: counting });
    const call = apiClient(server.url);
    const runId: string = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body.id;
    const waiting = await call('GET', `/v1/runs/${runId}`);
    await call('POST', `/v1/runs/${runId}/approvals/${waiting.body.pending_approval_id}`, { decision: 'approve' });
    await server.runtime.wait(runId);
    expect((await server.runtime.get(runId)).status).toBe('succeeded');
    const events: StoredEvent[] = (await storeOf(server.runtime).listEvents(runId, 0, 10_000)).map((row) => ({
      seq: row.seq,
      type: row.type,
      data: JSON.parse(row.data) as Record<string, unknown>,
    }));

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await expect.poll(() => page.locator('[data-testid=timeline] tr.event').count(), WAIT).toBe(events.length);
    await expect.poll(() => page.locator('[data-testid=ledger] tr[data-call]').count(), WAIT).toBe(5);
    await page.locator('[data-tab=ledger]').click();
    // The page has loaded what it will: the stream ended with the run, the last reload is done.
    await page.waitForSelector(`section.run[data-synced-seq="${events.length}"]`, WAIT);

    const before = {
      requests: watched.requests.length,
      plannerCalls,
      ledger: JSON.stringify(await server.runtime.toolCalls(runId)),
      steps: (await server.runtime.steps(runId)).length,
    };
    const scrubber = page.locator('[data-testid=scrubber]');
    expect(await scrubber.getAttribute('max')).toBe(String(events.length));
    for (let seq = 0; seq <= events.length; seq += 1) {
      await scrubber.fill(String(seq));
      const expected = expectedAt(events, seq);
      const info = page.locator('[data-testid=replay-info]');
      await expect.poll(() => info.getAttribute('data-seq')).toBe(String(seq));
      expect(await info.getAttribute('data-state'), `state at seq ${seq}`).toBe(expected.status);
      expect(await page.locator('svg.chart').getAttribute('data-current'), `chart at seq ${seq}`).toBe(expected.status);
      const [keys, counts] = await Promise.all([
        dataOf(page.locator('[data-edge]'), 'edge'),
        dataOf(page.locator('[data-edge]'), 'count'),
      ]);
      const edges = Object.fromEntries(keys.map((key, i) => [key, Number(counts[i])]).filter(([, n]) => Number(n) > 0));
      expect(edges, `edges at seq ${seq}`).toEqual(expected.edges);
      const rows = page.locator('[data-testid=ledger] tr[data-call]');
      const [ids, statuses] = await Promise.all([dataOf(rows, 'call'), dataOf(rows, 'status')]);
      const ledger = Object.fromEntries(ids.map((id, i) => [id, statuses[i]]));
      expect(ledger, `ledger at seq ${seq}`).toEqual(expected.calls);
      expect(await page.locator('[data-testid=timeline] tr.event.future').count()).toBe(events.length - seq);
    }
    // Nothing left the page, and nothing ran again.
    expect(watched.requests.length).toBe(before.requests);
    expect(plannerCalls).toBe(before.plannerCalls);
    expect(JSON.stringify(await server.runtime.toolCalls(runId))).toBe(before.ledger);
    expect(await server.runtime.steps(runId)).toHaveLength(before.steps);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
