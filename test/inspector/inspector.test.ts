/**
 * The inspector in real Chromium against a real server on loopback: the demo agent's run seen
 * from the list to its answer, approved from the page; the same with tokens (a viewer's 403,
 * another tenant's 404, a second decision's 409, all shown); drafts; export and commands.
 */
import { describe, expect, it } from 'vitest';
import { INSPECTOR_HEADERS } from '../../src/server/index.js';
import { numbersOf, openPage, type WatchedPage } from '../helpers/browser.js';
import { startDemoServer } from '../helpers/demo-server.js';
import { apiClient, startTestServer, TEST_AUTH, token } from '../helpers/server.js';
import { storeOf } from '../../src/runtime/internals.js';
import { scaled } from '../helpers/limits.js';

const WAIT = { timeout: scaled(30_000) };

/** The page has done nothing wrong: no exception, no console error, nothing outside its origin. */
function expectClean(watched: WatchedPage) {
  expect(watched.pageErrors).toEqual([]);
  expect(watched.consoleErrors).toEqual([]);
  expect(watched.outside()).toEqual([]);
}

describe('inspector (Chromium, dev mode)', () => {
  it('follows a demo run from the list to its answer and approves it from the page', async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    const watched = await openPage(server.url);
    const { page } = watched;
    const response = await page.goto(`${server.url}/inspector/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toBe(INSPECTOR_HEADERS['Content-Security-Policy']);
    expect(response?.headers()['content-security-policy']).toMatch(/^default-src 'self'/);
    await page.waitForSelector('[data-testid=runs-body]', WAIT);
    // A marker that a reload would wipe out: everything below happens without one.
    await page.evaluate("window.marker = 'same page'");

    const started = await call('POST', '/v1/runs', { input: 'Archive the stale configs' });
    expect(started.status).toBe(201);
    const runId: string = started.body.id;
    const row = page.locator(`tr[data-run="${runId}"]`);
    await row.waitFor(WAIT);
    await page.waitForSelector(`tr[data-run="${runId}"][data-status="waiting_human"]`, WAIT);

    await row.locator('a').click();
    await page.waitForSelector('svg.chart[data-current="waiting_human"]', WAIT);
    await expect.poll(() => page.locator('g.state.current').getAttribute('data-state'), WAIT).toBe('waiting_human');
    const pending = page.locator('[data-testid=pending-approval]');
    await pending.waitFor(WAIT);
    await expect.poll(() => pending.locator('tbody tr').count(), WAIT).toBe(1);
    expect(await pending.textContent()).toContain('configs.archive');
    expect(await pending.textContent()).toContain('service-b.json');
    // Taken edges are counted on the chart.
    await expect
      .poll(() => page.locator('[data-edge="planning>executing"]').getAttribute('data-count'), WAIT)
      .toBe('3');

    await page.locator('[data-testid=approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('svg.chart[data-current="succeeded"]', WAIT);
    await expect
      .poll(() => page.locator('[data-testid=answer]').textContent(), WAIT)
      .toContain('Archived 3 stale configs');
    await expect.poll(() => page.locator('.decisions li').textContent(), WAIT).toContain('approved by dev');
    expect(await page.evaluate('window.marker')).toBe('same page');
    const run = await call('GET', `/v1/runs/${runId}`);
    expect(run.body.status).toBe('succeeded');
    const seqs = await numbersOf(page.locator('[data-testid=timeline] tr.event'), 'seq');
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));

    // The ledger tells tool, effect, risk and status; the trace draws a bar per span.
    await page.locator('[data-tab=ledger]').click();
    await expect.poll(() => page.locator('[data-testid=ledger] tr[data-call]').count(), WAIT).toBe(5);
    const archive = page.locator('[data-testid=ledger] tr[data-call$=".s2.c0"]');
    expect(await archive.textContent()).toMatch(/configs\.archive.*idempotent.*high/);
    await page.locator('[data-tab=trace]').click();
    await expect.poll(() => page.locator('[data-testid=trace] .span-row').count(), WAIT).toBeGreaterThan(8);
    await page.locator('[data-tab=steps]').click();
    await expect.poll(() => page.locator('[data-testid=steps] details.step').count(), WAIT).toBe(4);

    // Back in the list the row changed without a reload; a filter narrows it.
    await page.locator('a.back').click();
    await page.waitForSelector(`tr[data-run="${runId}"][data-status="succeeded"]`, WAIT);
    await page.locator('[data-testid=filter-status]').selectOption('failed');
    await page.waitForSelector(`[data-testid=runs-body] >> text=No runs.`, WAIT);
    await page.locator('[data-testid=filter-status]').selectOption('succeeded');
    await page.waitForSelector(`tr[data-run="${runId}"]`, WAIT);
    expectClean(watched);
  });

  it('shows new runs and status changes in the list live, and cancels a run from the page', async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/`);
    await page.waitForSelector('[data-testid=runs-body]', WAIT);
    const first = (await call('POST', '/v1/runs', { input: 'Archive the stale configs', session_id: 'ops' })).body.id;
    await page.waitForSelector(`tr[data-run="${first}"][data-status="waiting_human"]`, WAIT);
    expect(await page.locator(`tr[data-run="${first}"]`).textContent()).toContain('ops');
    await page.goto(`${server.url}/inspector/#/runs/${first}`);
    await page.waitForSelector('svg.chart[data-current="waiting_human"]', WAIT);
    await page.locator('[data-testid=cancel-reason]').fill('not today');
    await page.locator('[data-testid=cancel]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="failed"]', WAIT);
    await page.waitForSelector('svg.chart[data-current="failed"]', WAIT);
    const run = await call('GET', `/v1/runs/${first}`);
    expect(run.body).toMatchObject({ status: 'failed', stop_reason: 'cancelled' });
    expect(run.body.failure.message).toContain('not today');
    await page.goto(`${server.url}/inspector/#/?session=ops`);
    await page.waitForSelector(`tr[data-run="${first}"][data-status="failed"]`, WAIT);
    expect(await page.locator('[data-testid=runs-body] tr[data-run]').count()).toBe(1);
    expectClean(watched);
  });

  it('exports a run as one JSON file and gives the commands that fetch it', async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    const runId = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body.id;
    const waiting = await call('GET', `/v1/runs/${runId}`);
    await call('POST', `/v1/runs/${runId}/approvals/${waiting.body.pending_approval_id}`, { decision: 'approve' });
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await page.waitForSelector('[data-testid=timeline] tr[data-type=state] >> text=executing → succeeded', WAIT);
    const [download] = await Promise.all([
      page.waitForEvent('download', WAIT),
      page.locator('[data-testid=export]').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${runId}.json`);
    const exported = JSON.parse(await readDownload(download));
    expect(exported).toMatchObject({ format: 'baton.run-export', run: { id: runId, status: 'succeeded' } });
    const stored = await storeOf(server.runtime).listEvents(runId, 0, 10_000);
    expect(exported.events.map((e: { seq: number }) => e.seq)).toEqual(stored.map((e) => e.seq));
    expect(exported.tool_calls).toHaveLength(5);
    expect(exported.steps).toHaveLength(4);
    expect(exported.approvals[0]).toMatchObject({ status: 'approved' });
    expect(exported.trace.spans.length).toBeGreaterThan(5);

    await page.locator('[data-testid=copy-curl]').click();
    const curl = await page.locator('[data-testid=commands]').textContent();
    expect(curl).toContain(`curl -s ${server.url}/v1/runs/${runId}`);
    await page.locator('[data-testid=copy-baton]').click();
    expect(await page.locator('[data-testid=commands]').textContent()).toContain(
      `npx -p baton-runtime baton show ${runId} --url ${server.url}`,
    );
    expectClean(watched);
  });
});

describe('inspector (Chromium, rate limits)', () => {
  it('waits out a 429 on its reads instead of showing it as an error', async () => {
    // One request a second after a burst of two: the page's first reads hit it however slow the machine.
    const server = await startDemoServer({ limits: { rateBurst: 2, ratePerSecond: 1 } });
    const runId: string = (await apiClient(server.url)('POST', '/v1/runs?wait=true', { input: 'Archive' })).body.id;
    const watched = await openPage(server.url);
    const { page } = watched;
    const limited: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 429) limited.push(response.url());
    });
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.waitForSelector('svg.chart[data-current="waiting_human"]', WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    await page.locator('a.back').click();
    await page.waitForSelector(`tr[data-run="${runId}"]`, WAIT);
    expect(limited.length).toBeGreaterThan(0);
    expect(await page.locator('.error').count()).toBe(0);
    expect(watched.pageErrors).toEqual([]);
  });
});

describe('inspector (Chromium, drafts)', () => {
  it('shows streamed model text live, marked as not the answer', async () => {
    const server = await startTestServer({ auth: { tokens: [] } });
    const call = apiClient(server.url);
    // `draft`: waits for approval, then streams two drafts before it answers.
    const runId: string = (await call('POST', '/v1/runs?wait=true', { input: 'draft' })).body.id;
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await page.locator('[data-testid=pending-approval]').waitFor(WAIT);
    await page.locator('[data-testid=approve]').click();
    const draft = page.locator('[data-testid=draft]');
    await draft.waitFor(WAIT);
    await expect
      .poll(() => page.locator('[data-testid=draft-text]').textContent(), WAIT)
      .toBe('thinkingthinking harder');
    expect(await draft.textContent()).toMatch(/not the answer|never the answer/);
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    const answer = await page.locator('[data-testid=answer]').textContent();
    expect(answer).toContain('mail:');
    expect(answer).not.toContain('thinking');
    // Drafts are never stored: the timeline holds only committed events.
    expect(await page.locator('[data-testid=timeline] tr[data-type=draft]').count()).toBe(0);
    expectClean(watched);
  });
});

describe('inspector (Chromium, tokens)', () => {
  it('asks for a token; a viewer cannot approve (403 shown), another tenant sees nothing, a second decision is refused (409 shown)', async () => {
    const server = await startDemoServer({ auth: TEST_AUTH });
    const submit = apiClient(server.url, token('acme-submit'));
    const runId = (await submit('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body.id;

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/`);
    await page.locator('[data-testid=token-form]').waitFor(WAIT);
    await page.locator('[data-testid=token-input]').fill('tok_wrong_0123456789abcdef');
    await page.locator('[data-testid=token-form] button').click();
    await page.locator('[data-testid=token-form] >> text=The token was refused').waitFor(WAIT);
    await page.locator('[data-testid=token-input]').fill(token('acme-view'));
    await page.locator('[data-testid=token-form] button').click();
    await page.waitForSelector(`tr[data-run="${runId}"][data-status="waiting_human"]`, WAIT);
    expect(await page.evaluate("sessionStorage.getItem('baton.inspector.token')")).toBe(token('acme-view'));

    // The viewer's live stream of the run works through a ticket; the approval does not.
    await page.locator(`tr[data-run="${runId}"] a`).click();
    await page.locator('[data-testid=pending-approval]').waitFor(WAIT);
    await page.locator('[data-testid=approve]').click();
    const forbidden = page.locator('.run-errors .error[data-code="auth.forbidden"]');
    await forbidden.waitFor(WAIT);
    expect(await forbidden.textContent()).toContain("403 auth.forbidden: 'viewer' lacks the role 'approve'");
    expect((await submit('GET', `/v1/runs/${runId}`)).body.status).toBe('waiting_human');
    expect(watched.outside()).toEqual([]);
    expect(watched.pageErrors).toEqual([]);

    // Another tenant's token: the run is not in its list, and its page answers 404.
    const other = await openPage(server.url);
    await other.page.goto(`${server.url}/inspector/`);
    await other.page.locator('[data-testid=token-input]').fill(token('globex-admin'));
    await other.page.locator('[data-testid=token-form] button').click();
    await other.page.locator('[data-testid=runs-body] >> text=No runs.').waitFor(WAIT);
    await other.page.goto(`${server.url}/inspector/#/runs/${runId}`);
    const missing = other.page.locator('.run-errors .error[data-code="run.not_found"]');
    await missing.waitFor(WAIT);
    expect(await missing.textContent()).toContain('404');
    expect(await other.page.locator('[data-testid=timeline] tr').count()).toBe(0);

    // An approver: someone else decides first, so the page's decision answers 409, shown.
    const approver = await openPage(server.url);
    await approver.page.goto(`${server.url}/inspector/`);
    await approver.page.locator('[data-testid=token-input]').fill(token('acme-approve'));
    await approver.page.locator('[data-testid=token-form] button').click();
    await approver.page.goto(`${server.url}/inspector/#/runs/${runId}`);
    await approver.page.locator('[data-testid=pending-approval]').waitFor(WAIT);
    const approvalId = (await submit('GET', `/v1/runs/${runId}`)).body.pending_approval_id;
    await approver.page.route('**/v1/runs/*/approvals/*', async (route) => {
      const first = await apiClient(server.url, token('acme-admin'))(
        'POST',
        `/v1/runs/${runId}/approvals/${approvalId}`,
        {
          decision: 'approve',
        },
      );
      expect(first.status).toBe(200);
      await route.continue();
    });
    await approver.page.locator('[data-testid=approve]').click();
    const conflict = approver.page.locator('.run-errors .error[data-code="approval.already_decided"]');
    await conflict.waitFor(WAIT);
    expect(await conflict.textContent()).toMatch(/^409 approval\.already_decided/);
    await approver.page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await expect
      .poll(() => approver.page.locator('.decisions li').textContent(), WAIT)
      .toContain('approved by acme-admin');
    // Exactly one archive happened.
    const calls = (await submit('GET', `/v1/runs/${runId}/tool-calls`)).body.tool_calls;
    expect(calls.filter((c: { tool: string }) => c.tool === 'configs.archive')).toMatchObject([
      { attempts: 1, status: 'succeeded' },
    ]);
    expect(approver.outside()).toEqual([]);
    expect(approver.pageErrors).toEqual([]);
  });
});

async function readDownload(download: { path(): Promise<string | null> }): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const path = await download.path();
  if (!path) throw new Error('The download was not saved');
  return readFile(path, 'utf8');
}
