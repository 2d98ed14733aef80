/**
 * Colour contrast measured in real Chromium: installs `in-page-colors.js` in a page and reads the
 * WCAG ratio of elements' text against the background really behind them (computed styles,
 * transparent backgrounds resolved up the tree).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';

const SCRIPT = readFileSync(join(import.meta.dirname, 'in-page-colors.js'), 'utf8');

/** One element's text contrast. */
export interface Contrast {
  what: string;
  ratio: number;
  color: number[];
  background: number[];
}

/** What `in-page-colors.js` installs (elements typed loosely: this project has no DOM library). */
interface Colors {
  contrastOf(el: unknown): Omit<Contrast, 'what'>;
  markContrast(color: string, el: unknown): number;
  describe(el: unknown): string;
  textElements(root: unknown): unknown[];
}

/** Makes the measuring functions available in the page (again after each navigation). */
export async function installColors(page: Page): Promise<void> {
  await page.evaluate(SCRIPT);
}

/** The contrast of every element a locator finds. */
export function contrastOf(locator: Locator): Promise<Contrast[]> {
  return locator.evaluateAll((elements) => {
    const colors = (globalThis as unknown as { batonColors: Colors }).batonColors;
    return elements.map((el) => ({ what: colors.describe(el), ...colors.contrastOf(el) }));
  });
}

/** The contrast of every rendered text under `root` (disabled controls aside). */
export function contrastOfAllText(page: Page, root = 'body'): Promise<Contrast[]> {
  return page.locator(root).evaluate((el) => {
    const colors = (globalThis as unknown as { batonColors: Colors }).batonColors;
    return colors.textElements(el).map((e) => ({ what: colors.describe(e), ...colors.contrastOf(e) }));
  });
}

/** The elements of a list whose ratio is under `min`, for a readable failure. */
export function below(contrasts: Contrast[], min: number): string[] {
  return contrasts
    .filter((c) => c.ratio < min)
    .map((c) => `${c.what}: ${c.ratio} (rgb ${c.color.join(',')} on ${c.background.join(',')})`);
}
