/**
 * The human side in the inspector, in real Chromium against a real server on loopback: a question
 * answered through the form its JSON Schema calls for (a bad value shows the issue, a good one
 * lets the run go on), the demo's archive approved after a file was dropped from its list (the
 * diff shown before and after, the tool run once with the edited list), a person's output given
 * instead of running a call, a budget wait extended and another ended, and the role and expiry
 * of a wait a policy, then an expiry, escalated. Every control of these is labelled, and every
 * text keeps 4.5:1.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askHuman, createScriptedPlanner, type PlannerRequest, type RunOptions } from '../../src/index.js';
import { openPage, type WatchedPage } from '../helpers/browser.js';
import { startDemoServer } from '../helpers/demo-server.js';
import { apiClient, startTestServer, TEST_AUTH, token, type TestServer } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';
import { below, contrastOfAllText, installColors } from '../helpers/page-colors.js';
import { createWorld, readEffects } from '../helpers/world.js';
import { eventsOf } from '../helpers/runtime.js';

const WAIT = { timeout: scaled(30_000) };

function expectClean(watched: WatchedPage) {
  expect(watched.pageErrors).toEqual([]);
  expect(watched.consoleErrors.filter((e) => !/status of (400|409)/.test(e))).toEqual([]);
  expect(watched.outside()).toEqual([]);
}

const lastMessage = (request: PlannerRequest) => request.messages.at(-1)!.content;

/**
 * A server whose runs ask a question (`ask`), send through a high-risk tool with an output
 * schema (`send…`), or read twice before answering (`read`); a policy escalates to `admin` a run
 * whose context says `escalate`.
 */
async function humanServer(auth = { tokens: [] as typeof TEST_AUTH.tokens }) {
  const server = await startTestServer({
    auth,
    runtime: (effects) => {
      const world = createWorld(effects, { risk: 'high' });
      const low = createWorld(effects);
      const unsafe = { ...world.unsafe, output: z.object({ value: z.string(), replayed: z.boolean() }) };
      return {
        tools: [askHuman(), unsafe, low.read],
        planner: createScriptedPlanner((request) => {
          if (request.input === 'ask' && request.stepIndex === 0) {
            return { type: 'ask', question: 'How many copies?', schema: { type: 'integer', minimum: 1 } };
          }
          if (request.input === 'ask-object' && request.stepIndex === 0) {
            return {
              type: 'ask',
              question: 'Which release, how many copies?',
              schema: request.context.schema as never,
            };
          }
          if (request.input.startsWith('send') && request.stepIndex === 0) {
            return { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'to everyone' } }] };
          }
          if (request.input === 'read' && request.stepIndex < 2) {
            return { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: `v${request.stepIndex}` } }] };
          }
          return { type: 'final', answer: `final: ${lastMessage(request)}` };
        }),
        policy: (request) =>
          request.context.escalate
            ? { decision: 'escalate', role: 'admin', reason: 'sends mail to everyone' }
            : request.defaultDecision,
      };
    },
  });
  return server;
}

/** A run started in process, once it waits for a person. */
async function waitingRun(server: TestServer, input: string, options: RunOptions = {}, context = {}) {
  const run = await server.runtime.start({ input, options, context });
  const waiting = await server.runtime.wait(run.id);
  expect(waiting.status).toBe('waiting_human');
  return waiting;
}

async function openRun(server: TestServer, runId: string) {
  const watched = await openPage(server.url);
  await watched.page.goto(`${server.url}/inspector/#/runs/${runId}`);
  await watched.page.locator('[data-testid=pending-approval]').waitFor(WAIT);
  await watched.page.waitForSelector('section.run[data-synced-seq]', WAIT);
  return watched;
}

describe('inspector (Chromium, the human side)', () => {
  it('answers a question through the form its schema calls for: a bad value shows the issue, a good one lets the run succeed', async () => {
    const server = await humanServer();
    const run = await waitingRun(server, 'ask', { expiresIn: 3_600_000 });
    const watched = await openRun(server, run.id);
    const { page } = watched;
    expect(await page.locator('[data-testid=question]').textContent()).toBe('How many copies?');
    const terms = page.locator('[data-testid=wait-terms]');
    expect(await terms.locator('[data-testid=wait-role]').getAttribute('data-role')).toBe('approve');
    const [row] = await server.runtime.approvals(run.id);
    expect(Number(await terms.locator('[data-testid=wait-expiry]').getAttribute('data-expires-at'))).toBe(
      row!.expiresAt,
    );
    // An integer schema is a number field, found by its label, with the schema's bound as its hint.
    const field = page.getByLabel('Answer', { exact: true });
    expect(await field.getAttribute('type')).toBe('number');
    expect(await page.locator('[data-field=answer] .hint').textContent()).toBe('at least 1');

    await field.fill('0');
    await page.locator('[data-testid=submit-answer]').click();
    const refused = page.locator('[data-testid=answer-errors] .error[data-code="input.invalid"]');
    await refused.waitFor(WAIT);
    expect(await refused.textContent()).toMatch(/^400 input\.invalid/);
    const issues = await refused.locator('[data-testid=issues] li').allTextContents();
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(/>=\s*1|at least 1|too small/i);
    expect((await server.runtime.get(run.id)).status).toBe('waiting_human');

    await field.fill('3');
    await page.locator('[data-testid=submit-answer]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await expect.poll(() => page.locator('[data-testid=answer]').textContent(), WAIT).toContain('Answer from dev:\n3');
    const decided = page.locator(`.decisions li[data-approval="${run.pendingInput!.id}"]`);
    await expect.poll(() => decided.getAttribute('data-action'), WAIT).toBe('answer');
    expect(await decided.textContent()).toContain('approved by dev answered: 3');
    expect((await server.runtime.approvals(run.id))[0]).toMatchObject({ decidedBy: 'dev', answer: { answer: 3 } });
    expectClean(watched);
  });

  it("drops a file from the demo's archive before approving: the diff shows first, the tool runs once with the edited list", async () => {
    const server = await startDemoServer();
    const call = apiClient(server.url);
    const started = (await call('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' })).body;
    expect(started.status).toBe('waiting_human');
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${started.id}`);
    await page.locator('[data-testid=pending-approval]').waitFor(WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    // The arguments as proposed, then the editor a click away.
    expect(await page.locator('[data-testid=pending-approval] pre.args').textContent()).toContain('service-d.json');
    await page.locator('[data-testid=edit-box] summary').click();
    const args = page.getByLabel(/^Arguments of configs\.archive .*, editable$/);
    await args.waitFor(WAIT);
    const proposed = JSON.parse(await args.inputValue()) as { files: string[] };
    expect(proposed.files).toEqual(['service-b.json', 'service-d.json', 'service-f.json']);
    const approve = page.locator('[data-testid=approve-edits]');
    expect(await approve.isDisabled()).toBe(true);
    expect(await page.locator('[data-testid=edit-diff]').textContent()).toBe('No changes.');

    await args.fill('{ "files": ["service-b.json", "service-f.json"] }');
    const removed = page.locator('[data-testid=edit-diff] li[data-kind=removed]');
    await removed.waitFor(WAIT);
    expect(await page.locator('[data-testid=edit-diff] li').count()).toBe(1);
    expect(await removed.textContent()).toContain('files[1] removed "service-d.json"');
    await page.locator('[data-testid=decision-reason]').fill('keep d for now');
    await approve.click();

    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await expect
      .poll(() => page.locator('[data-testid=answer]').textContent(), WAIT)
      .toContain('Archived 2 stale configs into archive/: service-b.json, service-f.json.');
    expect(await page.locator('[data-testid=answer]').textContent()).toContain(
      'Kept in place because dev dropped them from the list before approving: service-d.json.',
    );
    // The decision shows its diff, and so does the ledger's call.
    const decided = page.locator('.decisions li[data-action=edit]');
    await decided.waitFor(WAIT);
    expect(await decided.textContent()).toContain('keep d for now');
    expect(await decided.locator('[data-testid=decided-diff] li[data-kind=removed]').textContent()).toContain(
      'service-d.json',
    );
    await page.locator('[data-tab=ledger]').click();
    const mark = page.locator('[data-testid=ledger] tr[data-call$=".s2.c0"] details.edited');
    await mark.waitFor(WAIT);
    expect(await mark.getAttribute('data-edited-by')).toBe('dev');

    // Run once, with the edited list; the model's own list kept beside it.
    const calls = (await call('GET', `/v1/runs/${started.id}/tool-calls`)).body.tool_calls;
    const archive = calls.filter((c: { tool: string }) => c.tool === 'configs.archive');
    expect(archive).toMatchObject([
      {
        args: { files: ['service-b.json', 'service-f.json'] },
        edited: { proposed_args: { files: proposed.files }, by: 'dev', reason: 'keep d for now' },
        attempts: 1,
        status: 'succeeded',
        result: { content: { archived: ['service-b.json', 'service-f.json'], missing: [] } },
      },
    ]);
    const actions = (await eventsOf(server.runtime, started.id)).filter(
      (e) => e.type === 'action' && e.data.tool === 'configs.archive',
    );
    expect(actions.map((e) => e.data.args)).toEqual([{ files: ['service-b.json', 'service-f.json'] }]);
    expectClean(watched);
  });

  it("gives a person's output instead of running a call: a wrong shape is refused with its issues", async () => {
    const server = await humanServer();
    const run = await waitingRun(server, 'send');
    const watched = await openRun(server, run.id);
    const { page } = watched;
    await page.locator('[data-testid=respond-box] summary').click();
    const output = page.getByLabel(/^Output of world\.unsafe/);
    await output.fill('{ "value": 1 }');
    await page.locator('[data-testid=respond]').click();
    const refused = page.locator('[data-testid=respond-errors] .error[data-code="input.invalid"]');
    await refused.waitFor(WAIT);
    expect(await refused.locator('[data-testid=issues] li').count()).toBeGreaterThan(0);
    expect((await server.runtime.get(run.id)).status).toBe('waiting_human');

    await output.fill('{ "value": "sent by hand", "replayed": false }');
    await page.locator('[data-testid=respond]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    await expect
      .poll(() => page.locator('[data-testid=answer]').textContent(), WAIT)
      .toContain("Not run: dev gave this result for 'world.unsafe' instead");
    const decided = page.locator('.decisions li[data-action=respond]');
    await decided.waitFor(WAIT);
    expect(await decided.textContent()).toContain('responded as the tool: {"value":"sent by hand","replayed":false}');
    expect(readEffects(server.effects)).toEqual([]);
    const [ledger] = await server.runtime.toolCalls(run.id);
    expect(ledger).toMatchObject({ status: 'succeeded', result: { given: 'response', recordedBy: 'dev' } });
    expectClean(watched);
  });

  it('shows a budget wait with each limit and its use: extended it goes on, another ended fails', async () => {
    const server = await humanServer();
    const options: RunOptions = { budget: { maxLlmCalls: 1 }, onBudgetExceeded: 'ask' };
    const run = await waitingRun(server, 'read', options);
    const watched = await openRun(server, run.id);
    const { page } = watched;
    const heading = page.locator('[data-testid=budget-ran-out]');
    expect(await heading.getAttribute('data-budget')).toBe('max_llm_calls');
    expect(await heading.getAttribute('data-step')).toBe('1');
    const row = page.locator('tr[data-limit=max_llm_calls]');
    expect(await row.locator('td').allTextContents()).toEqual(['llm calls — ran out', '1', '1', '']);
    expect(await page.locator('tr[data-limit=max_steps] td').nth(2).textContent()).toBe('25');
    const limit = page.getByLabel('New limit of llm calls');
    expect(await limit.inputValue()).toBe('2');

    // Lower than what the run used: refused, nothing changes.
    await limit.fill('0');
    await page.locator('[data-testid=extend]').click();
    const refused = page.locator('[data-testid=budget-errors] .error[data-code="input.invalid"]');
    await refused.waitFor(WAIT);
    expect(await refused.textContent()).toContain('lower than what the run has used already');
    expect((await server.runtime.get(run.id)).status).toBe('waiting_human');

    await limit.fill('5');
    await page.locator('[data-testid=extend]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    const done = await server.runtime.get(run.id);
    expect(done.usage.llmCalls).toBe(3);
    const decided = page.locator('.decisions li[data-action=extend]');
    await decided.waitFor(WAIT);
    expect(await decided.textContent()).toContain('extended: llm calls 5');
    // The usage panel reads the new limit.
    await expect.poll(() => page.locator('[data-usage=llm_calls] .usage-value').textContent(), WAIT).toBe('3 / 5');
    expectClean(watched);

    const ended = await waitingRun(server, 'read', options);
    const second = await openRun(server, ended.id);
    await second.page.locator('[data-testid=end]').click();
    await second.page.waitForSelector('[data-testid=run-status][data-status="failed"]', WAIT);
    expect(await server.runtime.get(ended.id)).toMatchObject({ status: 'failed', stopReason: 'budget_exceeded' });
    const endedRow = second.page.locator('.decisions li[data-action=end]');
    await endedRow.waitFor(WAIT);
    expect(await endedRow.textContent()).toContain('rejected by dev ended the run');
    expectClean(second);
  });

  it('shows the role a wait needs and its expiry: escalated by a policy, then by an expiry; only that role decides', async () => {
    const server = await humanServer(TEST_AUTH);
    // Runs of the tokens' tenant, so the page's admin sees them.
    const policy = await waitingRun(server, 'send', { expiresIn: 3_600_000 }, { escalate: true, tenant_id: 'acme' });
    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/`);
    await page.locator('[data-testid=token-input]').fill(token('acme-admin'));
    await page.locator('[data-testid=token-form] button').click();
    await page.locator('[data-testid=runs-body]').waitFor(WAIT);
    await page.goto(`${server.url}/inspector/#/runs/${policy.id}`);
    const terms = page.locator('[data-testid=pending-approval] [data-testid=wait-terms]');
    await terms.waitFor(WAIT);
    await page.waitForSelector('section.run[data-synced-seq]', WAIT);
    expect(await terms.locator('[data-testid=wait-role]').getAttribute('data-role')).toBe('admin');
    expect(await terms.locator('[data-testid=escalated-policy]').textContent()).toBe(
      ' · escalated by a policy: sends mail to everyone',
    );
    const [row] = await server.runtime.approvals(policy.id);
    expect(Number(await terms.locator('[data-testid=wait-expiry]').getAttribute('data-expires-at'))).toBe(
      row!.expiresAt,
    );
    expect(await terms.locator('[data-testid=wait-expiry]').textContent()).toContain('then it counts as rejected');
    // An approver without the role the policy named is refused; the page's admin approves.
    const alice = apiClient(server.url, token('acme-approve'));
    const refused = await alice('POST', `/v1/runs/${policy.id}/approvals/${policy.pendingApprovalId}`, {
      decision: 'approve',
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error.details).toEqual({ required_role: 'admin' });
    await page.locator('[data-testid=approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);

    // A plain approval whose expiry hands it to admin: the page shows the handover as it happens.
    const expiring = await waitingRun(
      server,
      'send-expiring',
      { expiresIn: 500, onExpire: { escalate: 'admin' } },
      { tenant_id: 'acme' },
    );
    await page.goto(`${server.url}/inspector/#/runs/${expiring.id}`);
    const escalated = page.locator('[data-testid=pending-approval] [data-testid=escalated]');
    await escalated.waitFor(WAIT);
    expect(await escalated.getAttribute('data-from-role')).toBe('approve');
    expect(await page.locator('[data-testid=wait-role]').getAttribute('data-role')).toBe('admin');
    expect(await page.locator('[data-testid=wait-expiry]').count()).toBe(0);
    expect((await server.runtime.approvals(expiring.id))[0]).toMatchObject({ status: 'pending', role: 'admin' });
    await page.locator('[data-testid=approve]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    expect(readEffects(server.effects).map((e) => e.value)).toEqual(['to everyone', 'to everyone']);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.outside()).toEqual([]);
  });

  it('labels every control of a question, an edit, a response and a budget wait, and keeps their text at 4.5:1', async () => {
    const server = await humanServer();
    const object = {
      type: 'object',
      properties: {
        release: { type: 'string', enum: ['1.4', '1.5', '2.0'] },
        copies: { type: 'integer', minimum: 1 },
        note: { type: 'string' },
        urgent: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['release', 'copies'],
    };
    const asked = await server.runtime.start({ input: 'ask' });
    await server.runtime.wait(asked.id);
    const sending = await waitingRun(server, 'send', { expiresIn: 3_600_000 });
    const reading = await waitingRun(server, 'read', { budget: { maxLlmCalls: 1 }, onBudgetExceeded: 'ask' });
    const objectRun = await startObjectQuestion(server, object);
    const { page } = await openPage(server.url);
    for (const runId of [asked.id, sending.id, reading.id, objectRun]) {
      await page.goto(`${server.url}/inspector/#/runs/${runId}`);
      const pending = page.locator('[data-testid=pending-approval]');
      await pending.waitFor(WAIT);
      await page.waitForSelector('section.run[data-synced-seq]', WAIT);
      for (const summary of await pending.locator('details summary').all()) await summary.click();
      if (runId === sending.id) {
        await page.locator('[data-testid=edit-args]').fill('{ "value": "to the team" }');
        await page.locator('[data-testid=edit-diff] li').first().waitFor(WAIT);
      }
      const unlabelled = await pending.locator('input, textarea, select').evaluateAll((controls) =>
        controls
          .filter((c) => {
            const control = c as unknown as { labels: unknown[] | null; getAttribute(name: string): string | null };
            return (control.labels?.length ?? 0) === 0 && !control.getAttribute('aria-label');
          })
          .map((c) => (c as unknown as { outerHTML: string }).outerHTML),
      );
      expect(unlabelled, `run ${runId}`).toEqual([]);
      expect(await pending.locator('input, textarea, select').count()).toBeGreaterThan(1);
      await installColors(page);
      const all = await contrastOfAllText(page, '[data-testid=pending-approval]');
      expect(all.length).toBeGreaterThan(5);
      expect(below(all, 4.5), `run ${runId}`).toEqual([]);
    }
  });
});

/** A run asking a question whose answer is an object (a field per property); its id once it waits. */
async function startObjectQuestion(server: TestServer, schema: Record<string, unknown>) {
  const runtime = server.runtime;
  const run = await runtime.start({ input: 'ask-object', context: { schema } });
  const waiting = await runtime.wait(run.id);
  expect(waiting.pendingInput?.schema).toEqual(schema);
  return run.id;
}
