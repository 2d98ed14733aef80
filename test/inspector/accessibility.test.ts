/**
 * The inspector read by people who need contrast and a keyboard, in real Chromium against a real
 * server: every text at 4.5:1 or more against what is really behind it (computed colours), the
 * connection pill in each state, tabs that follow the WAI-ARIA tabs pattern, and a focus ring
 * that a keyboard user can see.
 */
import { describe, expect, it } from 'vitest';
import { openPage } from '../helpers/browser.js';
import { startDemoServer } from '../helpers/demo-server.js';
import { below, contrastOf, contrastOfAllText, installColors } from '../helpers/page-colors.js';
import { apiClient } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };
const AA = 4.5;

/** A demo server with one finished run and one waiting for approval. */
async function demoWithRuns() {
  const server = await startDemoServer();
  const call = apiClient(server.url);
  const done = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body;
  await call('POST', `/v1/runs/${done.id}/approvals/${done.pending_approval_id}?wait=true`, { decision: 'approve' });
  const waiting = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the configs of billing' })).body;
  expect(waiting.status).toBe('waiting_human');
  return { server, doneId: done.id as string, waitingId: waiting.id as string };
}

describe('inspector contrast (Chromium)', () => {
  it('keeps every text of the runs list at 4.5:1, the connection pill in each of its states too', async () => {
    const { server, waitingId } = await demoWithRuns();
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/`);
    await page.waitForSelector(`tr[data-run="${waitingId}"][data-status="waiting_human"]`, WAIT);
    await page.waitForSelector('#connection[data-status="live"]', WAIT);
    await installColors(page);

    const all = await contrastOfAllText(page);
    expect(all.length).toBeGreaterThan(30);
    expect(below(all, AA)).toEqual([]);
    const muted = await contrastOf(page.locator('.muted, th'));
    expect(muted.length).toBeGreaterThan(5);
    expect(below(muted, AA)).toEqual([]);

    // The pill as each state styles it (the state names are the page's own: notices.js).
    for (const status of ['connecting', 'live', 'reconnecting', 'ended']) {
      await page.locator('#connection').evaluate((el, s) => {
        el.dataset.status = s;
        el.textContent = s === 'reconnecting' ? 'reconnecting… connection lost' : s;
      }, status);
      const [pill] = await contrastOf(page.locator('#connection'));
      expect(pill?.ratio, `the pill when ${status}`).toBeGreaterThanOrEqual(AA);
    }
  });

  it('keeps every text of a run at 4.5:1: muted text, the chart (states, edge labels, counts), each tab', async () => {
    const { server, waitingId } = await demoWithRuns();
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/#/runs/${waitingId}`);
    await page.waitForSelector('[data-testid=pending-approval]', WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    await page.waitForSelector(
      '[data-edge-label="executing>waiting_human"].taken, [data-edge="executing>waiting_human"].taken',
      WAIT,
    );
    await installColors(page);

    const labels = await contrastOf(page.locator('svg.chart .edge-label'));
    // One per arrow of the run machine (11 pairs of states).
    expect(labels.length).toBe(11);
    expect(below(labels, AA)).toEqual([]);
    const counts = await contrastOf(page.locator('svg.chart .edge-count:not(:empty)'));
    expect(counts.length).toBeGreaterThan(3);
    expect(below(counts, AA)).toEqual([]);
    const states = await contrastOf(page.locator('svg.chart g.state text'));
    expect(states.length).toBe(6);
    expect(below(states, AA)).toEqual([]);
    const muted = await contrastOf(page.locator('.muted, .replay-info, .usage-name, th'));
    expect(muted.length).toBeGreaterThan(10);
    expect(below(muted, AA)).toEqual([]);

    for (const tab of ['timeline', 'steps', 'ledger', 'trace']) {
      await page.locator(`[data-tab=${tab}]`).click();
      await page.locator(`[data-panel=${tab}]:not([hidden])`).waitFor(WAIT);
      const all = await contrastOfAllText(page);
      expect(all.length).toBeGreaterThan(30);
      expect(below(all, AA), `with the ${tab} tab open`).toEqual([]);
    }
  });
});

describe('inspector keyboard (Chromium)', () => {
  it('makes the run tabs a tablist: each tab controls its panel, arrows, Home and End move the selection', async () => {
    const { server, doneId } = await demoWithRuns();
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/#/runs/${doneId}`);
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);

    const tabs = page.locator('[role=tablist] [role=tab]');
    expect(await tabs.count()).toBe(4);
    const wiring = await tabs.evaluateAll((elements) =>
      elements.map((tab) => {
        const doc = tab.ownerDocument;
        const panel = doc.getElementById(tab.getAttribute('aria-controls') ?? '');
        return {
          tab: tab.getAttribute('data-tab'),
          role: panel?.getAttribute('role'),
          labelledBy: panel?.getAttribute('aria-labelledby') === tab.id && tab.id !== '',
          panel: panel?.getAttribute('data-panel'),
        };
      }),
    );
    expect(wiring).toEqual(
      ['timeline', 'steps', 'ledger', 'trace'].map((tab) => ({ tab, role: 'tabpanel', labelledBy: true, panel: tab })),
    );

    /** Which tab is selected, focused, and whose panel shows. */
    const state = () =>
      page.evaluate(() => {
        const doc = (globalThis as unknown as { document: DocumentLike }).document;
        const selected = [...doc.querySelectorAll('[role=tab][aria-selected="true"]')].map((t) => t.dataset.tab);
        const inTabOrder = [...doc.querySelectorAll('[role=tab]')]
          .filter((t) => t.getAttribute('tabindex') !== '-1')
          .map((t) => t.dataset.tab);
        const shown = [...doc.querySelectorAll('[role=tabpanel]')].filter((p) => !p.hidden).map((p) => p.dataset.panel);
        return { selected, inTabOrder, shown, focused: doc.activeElement?.dataset.tab ?? null };
      });
    const at = (tab: string) => ({ selected: [tab], inTabOrder: [tab], shown: [tab], focused: tab });

    await page.locator('[data-tab=timeline]').focus();
    expect(await state()).toEqual(at('timeline'));
    await page.keyboard.press('ArrowRight');
    expect(await state()).toEqual(at('steps'));
    await page.keyboard.press('ArrowRight');
    expect(await state()).toEqual(at('ledger'));
    await page.keyboard.press('End');
    expect(await state()).toEqual(at('trace'));
    await page.keyboard.press('ArrowRight');
    expect(await state(), 'Right on the last tab wraps to the first').toEqual(at('timeline'));
    await page.keyboard.press('ArrowLeft');
    expect(await state(), 'Left on the first tab wraps to the last').toEqual(at('trace'));
    await page.keyboard.press('Home');
    expect(await state()).toEqual(at('timeline'));
    // Tab leaves the tablist for the panel, not for the next tab.
    await page.keyboard.press('Tab');
    expect(
      await page.evaluate(
        () => (globalThis as unknown as { document: DocumentLike }).document.activeElement?.dataset.panel,
      ),
    ).toBe('timeline');
  });

  it('shows a visible focus ring on whatever the keyboard reaches, and none after a mouse click', async () => {
    const { server, waitingId } = await demoWithRuns();
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/#/runs/${waitingId}`);
    await page.waitForSelector('[data-testid=pending-approval]', WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    await installColors(page);

    /** The focused element's outline, and its contrast against what is behind it. */
    const focusRing = () =>
      page.evaluate(() => {
        const g = globalThis as unknown as {
          document: DocumentLike;
          getComputedStyle(el: unknown): { outlineStyle: string; outlineWidth: string; outlineColor: string };
          batonColors: { markContrast(color: string, el: unknown): number; describe(el: unknown): string };
        };
        const el = g.document.activeElement;
        const style = g.getComputedStyle(el);
        return {
          what: g.batonColors.describe(el),
          style: style.outlineStyle,
          width: parseFloat(style.outlineWidth),
          contrast: g.batonColors.markContrast(style.outlineColor, el),
        };
      });
    const seen: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      await page.keyboard.press('Tab');
      const ring = await focusRing();
      seen.push(ring.what);
      expect(ring.style, ring.what).toBe('solid');
      expect(ring.width, ring.what).toBeGreaterThanOrEqual(2);
      // Non-text contrast (WCAG 1.4.11): 3:1 against the background the ring is drawn on.
      expect(ring.contrast, ring.what).toBeGreaterThanOrEqual(3);
    }
    // The walk crossed the dark header and the light page.
    expect(seen.some((what) => what.startsWith('a.brand'))).toBe(true);
    expect(seen.some((what) => what.startsWith('button'))).toBe(true);

    await page.locator('[data-tab=steps]').click();
    const clicked = await focusRing();
    expect(clicked.what).toMatch(/^button/);
    expect(clicked.style).toBe('none');
  });
});

/** The few DOM shapes the in-page callbacks use (the test's TypeScript has no DOM library). */
interface HTMLLike {
  id: string;
  hidden: boolean;
  textContent: string | null;
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
}
interface DocumentLike {
  activeElement: HTMLLike | null;
  querySelectorAll(selector: string): Iterable<HTMLLike>;
}
