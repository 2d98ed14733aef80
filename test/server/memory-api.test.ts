/**
 * `GET /v1/memory` on a real server on loopback: the caller's tenant's memory and one of its
 * sessions' as of a version (the last by default), as runs wrote it with `memory.write`; another
 * tenant's token sees none of it; a version not written yet and unknown parameters are 400s.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, memoryTools } from '../../src/index.js';
import { apiClient, startTestServer, type Json } from '../helpers/server.js';

const ACME = 'acme-token-0123456789abcdef';
const GLOBEX = 'globex-token-0123456789abcdef';

describe('GET /v1/memory', () => {
  it("answers the caller's tenant's and session's memory as of a version", async () => {
    const server = await startTestServer({
      auth: {
        tokens: [
          { token: ACME, tenant: 'acme', roles: ['submit', 'view'], name: 'acme' },
          { token: GLOBEX, tenant: 'globex', roles: ['submit', 'view'], name: 'globex' },
        ],
      },
      runtime: () => ({
        tools: memoryTools(),
        planner: createScriptedPlanner([
          {
            type: 'tool_calls',
            calls: [
              { tool: 'memory.write', args: { key: 'name', value: 'Ada' } },
              { tool: 'memory.write', args: { scope: 'tenant', key: 'tier', value: 'gold' } },
            ],
          },
          { type: 'final', answer: 'noted' },
        ]),
      }),
    });
    const acme = apiClient(server.url, ACME);
    const run = (await acme('POST', '/v1/runs?wait=true', { input: 'remember', session_id: 'ada' })).body as Json;
    expect(run.status).toBe('succeeded');

    const now = await acme('GET', '/v1/memory?session_id=ada');
    expect(now.status).toBe(200);
    expect(now.body).toEqual({ version: 2, session: { name: 'Ada' }, tenant: { tier: 'gold' } });
    const before = await acme('GET', '/v1/memory?session_id=ada&version=1');
    expect(before.body).toEqual({ version: 1, session: { name: 'Ada' }, tenant: {} });
    expect((await acme('GET', '/v1/memory')).body).toEqual({ version: 2, session: null, tenant: { tier: 'gold' } });

    // Another tenant's token: the same session id is another session, the tenant's memory another.
    const globex = apiClient(server.url, GLOBEX);
    expect((await globex('GET', '/v1/memory?session_id=ada')).body).toEqual({ version: 2, session: {}, tenant: {} });

    const ahead = await acme('GET', '/v1/memory?version=3');
    expect(ahead.status).toBe(400);
    expect((ahead.body as { error: Json }).error).toMatchObject({
      code: 'input.invalid',
      message: 'Memory version 3 does not exist yet: the last is 2',
    });
    expect((await acme('GET', '/v1/memory?version=-1')).status).toBe(400);
    expect((await acme('GET', '/v1/memory?tenant=globex')).status).toBe(400);
  });
});
