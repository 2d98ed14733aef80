/**
 * Real Chromium for the inspector's tests: Debian's `/usr/bin/chromium` driven by playwright-core
 * (never a downloaded browser). A missing browser fails the test, it does not skip it. Each page
 * records its errors, its console errors and every request, so a test can assert that nothing
 * went wrong and nothing left the origin.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll } from 'vitest';

/** Where `.ci/run` installs Chromium (Debian's package). */
export const CHROMIUM = process.env.BATON_CHROMIUM ?? '/usr/bin/chromium';

let shared: Promise<Browser> | undefined;

afterAll(async () => {
  const browser = await shared?.catch(() => undefined);
  shared = undefined;
  await browser?.close();
});

/** The browser of this test file, launched once. */
export function browser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: install Debian's 'chromium' package (.ci/run does)`);
  }
  shared ??= chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  return shared;
}

/** A page and what it has done so far. */
export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  /** `console.error` messages, failed resource loads included. */
  consoleErrors: string[];
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Requests to any origin but `origin`. */
  outside(): string[];
}

/** A fresh page (its own context: its own sessionStorage) that records what it does. */
export async function openPage(origin: string): Promise<WatchedPage> {
  const context = await (await browser()).newContext({ viewport: { width: 1300, height: 900 } });
  const page = await context.newPage();
  const watched: WatchedPage = {
    page,
    context,
    pageErrors: [],
    consoleErrors: [],
    requests: [],
    outside: () => watched.requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:')),
  };
  page.on('pageerror', (error) => watched.pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') watched.consoleErrors.push(message.text());
  });
  page.on('request', (request) => watched.requests.push(request.url()));
  return watched;
}

/** The `data-<key>` attribute of every element a locator finds (read in the page). */
export function dataOf(locator: Locator, key: string): Promise<(string | null)[]> {
  return locator.evaluateAll((elements, name) => elements.map((e) => e.getAttribute(name)), `data-${key}`);
}

/** The same, as numbers. */
export async function numbersOf(locator: Locator, key: string): Promise<number[]> {
  return (await dataOf(locator, key)).map(Number);
}
