/**
 * Memory versions in the inspector, in real Chromium against a real server on loopback: each
 * step of a run whose agent has memory tools shows the memory version its planner read.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, memoryTools } from '../../src/index.js';
import { openPage } from '../helpers/browser.js';
import { scaled } from '../helpers/limits.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';

const WAIT = { timeout: scaled(30_000) };

describe('memory versions in the inspector', () => {
  it('shows the memory version each step read', async () => {
    const server = await startTestServer({
      auth: { tokens: [] },
      runtime: () => ({
        tools: memoryTools(),
        planner: createScriptedPlanner([
          {
            type: 'tool_calls',
            calls: [
              { tool: 'memory.write', args: { key: 'a', value: 1 } },
              { tool: 'memory.write', args: { key: 'b', value: 2 } },
            ],
          },
          { type: 'final', answer: 'remembered' },
        ]),
      }),
    });
    const call = apiClient(server.url);
    const run = (await call('POST', '/v1/runs?wait=true', { input: 'remember' })).body as Json;
    expect(run.status).toBe('succeeded');

    const watched = await openPage(server.url);
    const { page } = watched;
    await page.goto(`${server.url}/inspector/#/runs/${run.id}`);
    await page.waitForSelector('[data-testid=steps] details.step[data-step="1"] [data-memory-version]', {
      state: 'attached',
      ...WAIT,
    });
    const versions = await page.locator('[data-testid=steps] details.step [data-memory-version]').allTextContents();
    expect(versions).toEqual(['memory v0', 'memory v2']);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors).toEqual([]);
  });
});
