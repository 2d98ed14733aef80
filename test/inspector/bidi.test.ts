/**
 * Bidirectional controls in a run's text (U+202E and the rest) are shown as markers, never
 * applied: in `bidi.js` on its own, and on every part of the page that shows a run's input, a
 * tool's arguments, a result or an answer, in real Chromium.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BIDI_CONTROLS, markBidi, splitBidi } from '../../inspector/bidi.js';
import { createScriptedPlanner, defineTool, type Decision } from '../../src/index.js';
import { openPage } from '../helpers/browser.js';
import { below, contrastOf, installColors } from '../helpers/page-colors.js';
import { apiClient, startTestServer } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };
const RLO = '\u202E';
/** Every control the page must mark (marks, embeddings, overrides, isolates). */
const ALL = [
  '\u061C',
  '\u200E',
  '\u200F',
  '\u202A',
  '\u202B',
  '\u202C',
  '\u202D',
  '\u202E',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
];
const ANY = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

describe('bidi controls (inspector/bidi.js)', () => {
  it('replaces each bidirectional control by a marker naming its code point, and nothing else', () => {
    expect(Object.keys(BIDI_CONTROLS).sort()).toEqual([...ALL].sort());
    for (const char of ALL) {
      const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      expect(markBidi(`a${char}b`)).toBe(`a⟨${code}⟩b`);
      expect(splitBidi(`a${char}b`)).toEqual([
        'a',
        { code, name: BIDI_CONTROLS[char as keyof typeof BIDI_CONTROLS] },
        'b',
      ]);
    }
    expect(markBidi(`invoice${RLO}fdp.exe`)).toBe('invoice⟨U+202E⟩fdp.exe');
    expect(splitBidi(`${RLO}${RLO}`)).toEqual([
      { code: 'U+202E', name: 'RIGHT-TO-LEFT OVERRIDE' },
      { code: 'U+202E', name: 'RIGHT-TO-LEFT OVERRIDE' },
    ]);
    // Other text, right-to-left scripts included, is left as it is.
    expect(markBidi('plain, عربى, עברית, zero\u200Bwidth')).toBe('plain, عربى, עברית, zero\u200Bwidth');
    expect(splitBidi('')).toEqual([]);
  });
});

/** A planner that sends a file whose name hides an override, then answers with one. */
function bidiAgent(effects: string) {
  const send = defineTool({
    name: 'files.send',
    description: 'Sends a file (unsafe, high risk: waits for approval)',
    input: z.object({ file: z.string(), to: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ file, to }) => ({ sent: file, to, note: `sent ${file}` }),
  });
  const planner = createScriptedPlanner((request): Decision => {
    if (request.stepIndex === 0) {
      return {
        type: 'tool_calls',
        text: `Sending invoice${RLO}fdp.exe`,
        calls: [{ tool: 'files.send', args: { file: `invoice${RLO}fdp.exe`, to: `ops\u2067@example.com` } }],
      };
    }
    return { type: 'final', answer: `Sent invoice${RLO}fdp.exe\u200F` };
  });
  void effects;
  return { planner, tools: [send] };
}

describe('bidi controls on the page (Chromium)', () => {
  it('shows them marked, never raw, in the list, the input, the approval, timeline, ledger, steps and answer', async () => {
    const server = await startTestServer({ auth: { tokens: [] }, runtime: bidiAgent });
    const call = apiClient(server.url);
    const input = `Send invoice${RLO}fdp.exe to ops`;
    const run = (await call('POST', '/v1/runs?wait=true', { input })).body;
    expect(run.status).toBe('waiting_human');
    const { page } = await openPage(server.url);

    /** No raw control anywhere a person reads: text, tooltips, labels. */
    const rawControls = () =>
      page.evaluate((source) => {
        const doc = (
          globalThis as unknown as {
            document: {
              body: {
                textContent: string;
                querySelectorAll(s: string): Iterable<{ getAttribute(n: string): string | null }>;
              };
            };
          }
        ).document;
        const any = new RegExp(source);
        const places: string[] = [];
        if (any.test(doc.body.textContent)) places.push('text');
        for (const el of doc.body.querySelectorAll('[title], [aria-label], [placeholder]')) {
          for (const name of ['title', 'aria-label', 'placeholder']) {
            if (any.test(el.getAttribute(name) ?? '')) places.push(name);
          }
        }
        return places;
      }, ANY.source);

    await page.goto(`${server.url}/inspector/`);
    const row = page.locator(`tr[data-run="${run.id}"]`);
    await row.waitFor(WAIT);
    expect(await row.locator('[data-testid=run-input]').textContent()).toBe('Send invoice⟨U+202E⟩fdp.exe to ops');
    expect(await row.locator('[data-testid=run-input] .bidi-control').getAttribute('data-bidi')).toBe('U+202E');
    expect(await rawControls()).toEqual([]);

    await page.goto(`${server.url}/inspector/#/runs/${run.id}`);
    const pending = page.locator('[data-testid=pending-approval]');
    await pending.waitFor(WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    expect(await page.locator('.run-input').textContent()).toBe('Input: Send invoice⟨U+202E⟩fdp.exe to ops');
    // The person approving reads the file name in its stored order, the override shown.
    const args = (await pending.locator('pre.args').textContent()) ?? '';
    expect(args).toContain('"file": "invoice⟨U+202E⟩fdp.exe"');
    expect(args).toContain('"to": "ops⟨U+2067⟩@example.com"');
    expect(await pending.locator('pre.args .bidi-control').count()).toBe(2);
    const timeline = (await page.locator('[data-testid=timeline]').textContent()) ?? '';
    expect(timeline).toContain('created: "Send invoice⟨U+202E⟩fdp.exe to ops"');
    expect(timeline).toContain('approval needed: files.send {"file":"invoice⟨U+202E⟩fdp.exe"');
    expect(await rawControls()).toEqual([]);

    await page.locator('[data-testid=approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await expect
      .poll(() => page.locator('[data-testid=answer]').textContent(), WAIT)
      .toBe('Answer: Sent invoice⟨U+202E⟩fdp.exe⟨U+200F⟩');
    await page.waitForSelector(`section.run[data-synced-seq]`, WAIT);
    await expect
      .poll(() => page.locator('[data-testid=timeline]').textContent(), WAIT)
      .toContain('run files.send {"file":"invoice⟨U+202E⟩fdp.exe"');
    await page.locator('[data-tab=ledger]').click();
    const ledger = page.locator('[data-testid=ledger] tr[data-call]');
    await expect.poll(() => ledger.count(), WAIT).toBe(1);
    expect(await ledger.locator('td.args').textContent()).toBe(
      '{"file":"invoice⟨U+202E⟩fdp.exe","to":"ops⟨U+2067⟩@example.com"}',
    );
    expect(await ledger.textContent()).toContain('"note":"sent invoice⟨U+202E⟩fdp.exe"');
    await page.locator('[data-tab=steps]').click();
    await expect.poll(() => page.locator('[data-testid=steps] details.step').count(), WAIT).toBe(2);
    expect(await page.locator('[data-testid=steps]').textContent()).toContain('Sending invoice⟨U+202E⟩fdp.exe');
    // The hidden payloads (shown on a click) are marked as well.
    expect(await rawControls()).toEqual([]);
    expect(await page.locator('.bidi-control').count()).toBeGreaterThan(10);
    // The markers stand out and stay readable.
    await installColors(page);
    const markers = await contrastOf(page.locator('.bidi-control:visible'));
    expect(markers.length).toBeGreaterThan(3);
    expect(below(markers, 4.5)).toEqual([]);
  });
});
