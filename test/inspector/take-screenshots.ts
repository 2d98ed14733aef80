/**
 * Takes the README's screenshots of the inspector (`npm run screenshots`): the demo agent served
 * on a temp file, a few runs in different states, then the runs list and a run waiting for
 * approval, in Debian's Chromium; then that approval with a file dropped from the archive's list,
 * the diff shown before approving. Writes docs/inspector-runs.png, docs/inspector-run.png and
 * docs/inspector-edit.png.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { loadAgent } from '../../src/cli/load-agent.js';
import { createRuntime } from '../../src/index.js';
import { createServer } from '../../src/server/index.js';

const out = join(import.meta.dirname, '../../docs');
const dir = mkdtempSync(join(tmpdir(), 'baton-shots-'));
const agent = await loadAgent('demo', { dir: join(dir, 'configs') });
const runtime = createRuntime({ database: join(dir, 'baton.db'), planner: agent.offlinePlanner!, tools: agent.tools });
const listening = await createServer({ runtime, auth: { tokens: [] } }).listen({ host: '127.0.0.1', port: 0 });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const start = async (input: string, session: string) => {
    const run = await runtime.start({ input, sessionId: session });
    return runtime.wait(run.id);
  };
  const approved = await start('Archive the stale configs', 'ops-daily');
  await runtime.approve(approved.id, approved.pendingApprovalId!, { by: 'alice', reason: 'checked the list' });
  const rejected = await start('Archive everything older than a week', 'ops-adhoc');
  await runtime.reject(rejected.id, rejected.pendingApprovalId!, { by: 'bob', reason: 'too broad', terminate: true });
  const cancelled = await start('Archive the staging configs', 'staging');
  await runtime.cancel(cancelled.id, { reason: 'wrong environment' });
  const again = await start('Archive the stale configs', 'ops-weekly');
  await runtime.approve(again.id, again.pendingApprovalId!, { by: 'alice' });
  for (const run of [approved, again]) await runtime.wait(run.id);
  const waiting = await start('Archive the stale configs in the billing service', 'billing');

  const page = await browser.newPage({ viewport: { width: 1280, height: 720 }, deviceScaleFactor: 1 });
  await page.goto(`${listening.url}/inspector/`);
  await page.waitForSelector(`tr[data-run="${waiting.id}"][data-status="waiting_human"]`);
  await page.screenshot({ path: join(out, 'inspector-runs.png') });
  await page.goto(`${listening.url}/inspector/#/runs/${waiting.id}`);
  await page.waitForSelector('[data-testid=pending-approval]');
  await page.waitForSelector(`section.run[data-synced-seq]`);
  await page.setViewportSize({ width: 1280, height: 980 });
  await page.screenshot({ path: join(out, 'inspector-run.png') });
  // Edit then approve: the person drops one file from the list, and sees the diff first.
  await page.locator('[data-testid=pending-approval] [data-testid=edit-box] summary').click();
  const args = page.locator('[data-testid=pending-approval] [data-testid=edit-args]');
  const proposed = JSON.parse(await args.inputValue()) as { files: string[] };
  await args.fill(JSON.stringify({ files: proposed.files.filter((f) => f !== 'service-d.json') }, null, 2));
  await page.waitForSelector('[data-testid=edit-diff] li[data-kind=removed]');
  await page.locator('[data-testid=decision-reason]').fill('keep service-d for the migration');
  await page.setViewportSize({ width: 1280, height: 760 });
  await page.screenshot({ path: join(out, 'inspector-edit.png') });
  console.log(`screenshots written to ${out}`);
} finally {
  await browser.close();
  await listening.close();
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
}
