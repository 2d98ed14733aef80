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

  it('filters runs by a tag and a metadata entry, and shows each run’s tags', async () => {
    const server = await startTestServer({ auth: { tokens: [] } });
    const call = apiClient(server.url);
    const start = async (input: string, customer: string, tags: string[]) =>
      (await call('POST', '/v1/runs?wait=true', { input, metadata: { customer }, tags })).body.id as string;
    const a = await start('for acme', 'acme', ['nightly']);
    const b = await start('for globex', 'globex', ['nightly', 'billing']);
    const c = await start('untagged', 'acme', []);
    const { page, pageErrors, consoleErrors } = await openPage(server.url);
    await page.goto(`${server.url}/inspector/`);
    for (const id of [a, b, c]) await page.waitForSelector(`tr[data-run="${id}"]`, WAIT);
    expect(await page.locator(`tr[data-run="${b}"] [data-testid=run-tag]`).allTextContents()).toEqual([
      'nightly',
      'billing',
    ]);
    const shown = () =>
      page
        .locator('[data-testid=runs-body] tr[data-run]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-run')));
    await page.locator('[data-testid=filter-tag]').fill('nightly');
    await page.locator('[data-testid=filter-tag]').press('Enter');
    await expect.poll(shown, WAIT).toEqual([b, a]);
    expect(page.url()).toContain('tag=nightly');
    await page.locator('[data-testid=filter-metadata]').fill('customer=acme');
    await page.locator('[data-testid=filter-metadata]').press('Enter');
    await expect.poll(shown, WAIT).toEqual([a]);
    await page.locator('[data-testid=filter-tag]').fill('');
    await page.locator('[data-testid=filter-tag]').press('Enter');
    await expect.poll(shown, WAIT).toEqual([c, a]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
