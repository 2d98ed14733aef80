/**
 * The state chart as Chromium draws it, measured with the real fonts: each arrow's label sits on
 * its own arrow (nearer to it than to any other, crossing none), inside the view box, clear of
 * the states and of every other label; and it says which events take the arrow and how often
 * this run took it.
 */
import { describe, expect, it } from 'vitest';
import { openPage } from '../helpers/browser.js';
import { startDemoServer } from '../helpers/demo-server.js';
import { apiClient } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What the page measured: label boxes, arrow paths (as points) and state boxes, in view-box units. */
interface Measured {
  view: Box;
  labels: { edge: string; box: Box; text: string; count: string }[];
  paths: { edge: string; points: { x: number; y: number }[] }[];
  states: { state: string; box: Box }[];
}

function distance(p: { x: number; y: number }, box: Box): number {
  const dx = Math.max(box.x - p.x, 0, p.x - (box.x + box.width));
  const dy = Math.max(box.y - p.y, 0, p.y - (box.y + box.height));
  return Math.hypot(dx, dy);
}

function overlap(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

describe('inspector chart (Chromium)', () => {
  it('puts each edge label on its own edge, inside the chart, overlapping no label, state or other edge', async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    // A run that takes most arrows: planned, executed, waited, approved, then succeeded.
    const run = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body;
    await call('POST', `/v1/runs/${run.id}/approvals/${run.pending_approval_id}?wait=true`, { decision: 'approve' });
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/#/runs/${run.id}`);
    await page.waitForSelector('svg.chart[data-current="succeeded"]', WAIT);
    await page.waitForSelector('[data-edge="executing>succeeded"][data-count="1"]', { ...WAIT, state: 'attached' });

    const measured: Measured = await page.locator('svg.chart').evaluate((svg) => {
      type G = {
        getBBox(): Box;
        getTotalLength(): number;
        getPointAtLength(l: number): { x: number; y: number };
        getAttribute(n: string): string | null;
        textContent: string | null;
        querySelector(s: string): G | null;
      };
      const all = (s: string) => [
        ...(svg as unknown as { querySelectorAll(s: string): Iterable<G> }).querySelectorAll(s),
      ];
      // SVGRect does not cross to Node: copy its numbers.
      const plain = (b: Box): Box => ({ x: b.x, y: b.y, width: b.width, height: b.height });
      const [, , width, height] = (svg.getAttribute('viewBox') ?? '').split(' ').map(Number);
      return {
        view: { x: 0, y: 0, width: width ?? 0, height: height ?? 0 },
        labels: all('[data-edge-label]').map((g) => ({
          edge: g.getAttribute('data-edge-label') ?? '',
          box: plain(g.getBBox()),
          text: g.querySelector('.edge-label')?.textContent ?? '',
          count: g.querySelector('.edge-count')?.textContent ?? '',
        })),
        paths: all('[data-edge]').map((g) => {
          const path = g.querySelector('path.edge') as G;
          const length = path.getTotalLength();
          const points = [];
          for (let at = 0; at <= length; at += 1) {
            const p = path.getPointAtLength(at);
            points.push({ x: p.x, y: p.y });
          }
          return { edge: g.getAttribute('data-edge') ?? '', points };
        }),
        states: all('g.state').map((g) => ({
          state: g.getAttribute('data-state') ?? '',
          box: plain((g.querySelector('rect') as G).getBBox()),
        })),
      };
    });

    expect(measured.labels.map((l) => l.edge).sort()).toEqual(measured.paths.map((p) => p.edge).sort());
    // One label per arrow of the run machine: 11 pairs of states, the human side's waits included.
    expect(measured.labels.length).toBe(11);
    for (const label of measured.labels) {
      const { box } = label;
      // Not clipped: the whole box is inside the view box.
      expect(box.x, `${label.edge} left`).toBeGreaterThanOrEqual(0);
      expect(box.y, `${label.edge} top`).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width, `${label.edge} right`).toBeLessThanOrEqual(measured.view.width);
      expect(box.y + box.height, `${label.edge} bottom`).toBeLessThanOrEqual(measured.view.height);
      // On its own edge: close to it, and every other edge farther and not through it.
      const own = measured.paths.find((p) => p.edge === label.edge)!;
      const ownDistance = Math.min(...own.points.map((p) => distance(p, box)));
      expect(ownDistance, `${label.edge} is near its edge`).toBeLessThanOrEqual(16);
      expect(ownDistance, `${label.edge}'s label is crossed by its own edge`).toBeGreaterThan(0);
      for (const other of measured.paths) {
        if (other === own) continue;
        const d = Math.min(...other.points.map((p) => distance(p, box)));
        expect(d, `${label.edge}'s label against the edge ${other.edge}`).toBeGreaterThan(ownDistance);
        expect(d, `${label.edge}'s label is crossed by the edge ${other.edge}`).toBeGreaterThan(0);
      }
      for (const state of measured.states) {
        expect(overlap(box, state.box), `${label.edge}'s label covers the state ${state.state}`).toBe(false);
      }
      for (const other of measured.labels) {
        if (other !== label) expect(overlap(box, other.box), `${label.edge} overlaps ${other.edge}`).toBe(false);
      }
    }

    // The label names what takes the arrow; the count says how often this run took it.
    const byEdge = new Map(measured.labels.map((l) => [l.edge, l]));
    expect(byEdge.get('waiting_human>executing')).toMatchObject({ text: 'approved +10', count: 'taken 1×' });
    expect(byEdge.get('planning>executing')).toMatchObject({ count: 'taken 4×' });
    expect(byEdge.get('planning>executing')?.text).toMatch(/^plan_ready/);
    expect(byEdge.get('executing>succeeded')).toMatchObject({ text: 'done', count: 'taken 1×' });
    expect(byEdge.get('waiting_human>failed')).toMatchObject({ count: '' });
    const tooltip = await page.locator('[data-edge-label="waiting_human>executing"] title').textContent();
    expect(tooltip).toContain('approved [isPendingApproval]');
    expect(tooltip).toContain('cancel [wantsCompensation]');
  });
});
