/**
 * An MCP server's questions in the inspector, in real Chromium against a real server on loopback
 * and the note server over stdio (`--asking`): a question asked while the call stays open
 * (`elicitation/create`: the run is `executing`) and one that stopped the call (`input_required`:
 * the run waits), each answered through the form its `requestedSchema` calls for, naming the
 * server that asks; the server then sees the answer and does its work once.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedPlanner } from '../../src/index.js';
import { createMcpTools, type McpToolset } from '../../src/tools/mcp/index.js';
import { openPage } from '../helpers/browser.js';
import { readJournal } from '../helpers/mcp-journal.js';
import { stdioNotes } from '../helpers/mcp.js';
import { startTestServer } from '../helpers/server.js';
import { scaled } from '../helpers/limits.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';

const WAIT = { timeout: scaled(30_000) };
const toolsets: McpToolset[] = [];
afterEach(async () => {
  for (const set of toolsets.splice(0)) await set.close();
});

async function askingServer(journal: string) {
  const notes = await createMcpTools(stdioNotes(journal, false, false, true));
  toolsets.push(notes);
  return startTestServer({
    // Dev mode (no tokens): the page decides as `dev`.
    auth: { tokens: [] },
    runtime: () => ({
      tools: notes.tools,
      planner: createScriptedPlanner((request) =>
        request.stepIndex === 0
          ? { type: 'tool_calls', calls: [{ tool: request.input, args: { title: 'plan' } }] }
          : { type: 'final', answer: 'done' },
      ),
    }),
  });
}

async function openQuestion(url: string, runId: string) {
  const watched = await openPage(url);
  await watched.page.goto(`${url}/inspector/#/runs/${runId}`);
  await watched.page.locator('[data-testid=pending-approval]').waitFor(WAIT);
  await watched.page.waitForSelector('section.run[data-synced-seq]', WAIT);
  return watched;
}

const effects = (journal: string, tool: string) =>
  readJournal(journal)
    .filter((e) => e.kind === 'effect' && e.tool === tool)
    .map((e) => e.args);

describe('inspector (Chromium, MCP servers that ask)', () => {
  it('answers a question asked while the call stays open: the server publishes once, to the chosen audience', async () => {
    const journal = join(tempDir(), 'journal.jsonl');
    const server = await askingServer(journal);
    const run = await server.runtime.start({ input: 'publish_note' });
    await waitUntil(async () => (await server.runtime.get(run.id)).pendingInput !== null, 'the question');
    expect((await server.runtime.get(run.id)).status).toBe('executing');
    const watched = await openQuestion(server.url, run.id);
    const { page } = watched;
    expect(await page.locator('[data-testid=question]').textContent()).toBe("Who may read 'plan'?");
    const askedBy = page.locator('[data-testid=asked-by]');
    expect(await askedBy.textContent()).toContain('MCP server notes during its call of publish_note');
    expect(await askedBy.getAttribute('data-in-flight')).toBe('true');
    await page.getByLabel('team', { exact: true }).check();
    await page.locator('[data-testid=submit-answer]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    expect(effects(journal, 'publish_note')).toEqual([{ title: 'plan', audience: 'team' }]);
    const [wait] = await server.runtime.approvals(run.id);
    expect(wait).toMatchObject({ decidedBy: 'dev', answer: { answer: { audience: 'team' } } });
    expect(watched.pageErrors).toEqual([]);
    await server.close();
  });

  it('answers a question that stopped the call (input_required): the call is sent again with it, once', async () => {
    const journal = join(tempDir(), 'journal.jsonl');
    const server = await askingServer(journal);
    const run = await server.runtime.start({ input: 'rename_note' });
    expect((await server.runtime.wait(run.id)).status).toBe('waiting_human');
    const watched = await openQuestion(server.url, run.id);
    const { page } = watched;
    expect(await page.locator('[data-testid=question]').textContent()).toBe("New title for 'plan'?");
    expect(await page.locator('[data-testid=asked-by]').getAttribute('data-in-flight')).toBe('false');
    await page.getByLabel('title (required)', { exact: true }).fill('roadmap');
    await page.locator('[data-testid=submit-answer]').click();
    await page.waitForSelector('[data-testid=run-status][data-status="succeeded"]', WAIT);
    expect(effects(journal, 'rename_note')).toEqual([{ title: 'plan', to: 'roadmap' }]);
    expect(watched.pageErrors).toEqual([]);
    await server.close();
  });
});
