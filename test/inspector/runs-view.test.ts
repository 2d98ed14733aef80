/**
 * The runs list in real Chromium: each row says what the run was asked (its input on one short,
 * escaped line, the whole of it in the tooltip), so a person can tell runs apart.
 */
import { describe, expect, it } from 'vitest';
import { openPage } from '../helpers/browser.js';
import { apiClient, startTestServer } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };

describe('inspector runs list (Chromium)', () => {
  it('shows each run’s input in its own column: one line, control characters visible, markup as text, long ones cut', async () => {
    const server = await startTestServer({ auth: { tokens: [] } });
    const call = apiClient(server.url);
    const long = `hello ${'and more '.repeat(30)}the end`;
    const inputs = {
      lines: 'hello\nfrom two lines\tand a tab',
      markup: 'hello <b>bold</b> & \u001b[31mred',
      long,
    };
    const ids: Record<string, string> = {};
    for (const [name, input] of Object.entries(inputs)) {
      ids[name] = (await call('POST', '/v1/runs?wait=true', { input })).body.id;
    }
    const { page } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/`);
    for (const id of Object.values(ids)) await page.waitForSelector(`tr[data-run="${id}"]`, WAIT);

    const headers = await page.locator('.runs-table thead th').allTextContents();
    expect(headers.slice(0, 3)).toEqual(['Run', 'Input', 'Status']);
    const cell = (name: string) => page.locator(`tr[data-run="${ids[name]}"] td[data-testid=run-input]`);
    // The cell is the row's second column, under "Input".
    expect(await page.locator(`tr[data-run="${ids.lines}"] td:nth-child(2)`).getAttribute('data-testid')).toBe(
      'run-input',
    );
    expect(await cell('lines').textContent()).toBe('hello from two lines and a tab');
    expect(await cell('markup').textContent()).toBe('hello <b>bold</b> & ⟨U+001B⟩[31mred');
    expect(await cell('markup').locator('b').count()).toBe(0);
    const cut = (await cell('long').textContent()) ?? '';
    expect(cut.length).toBe(80);
    expect(cut.endsWith('…')).toBe(true);
    expect(long.startsWith(cut.slice(0, -1))).toBe(true);
    expect(await cell('long').getAttribute('title')).toBe(long);
    // The cell stays one line however long the input.
    const heights = await page
      .locator('[data-testid=runs-body] tr[data-run]')
      .evaluateAll((rows) => rows.map((r) => Math.round(r.getBoundingClientRect().height)));
    expect(new Set(heights).size).toBe(1);
  });
});
