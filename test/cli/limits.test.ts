/**
 * The limit flags of `baton serve` (from the built CLI): `--runs-per-tenant` refuses a tenant's
 * start over its cap with `429 run.tenant_limit` and writes nothing, another tenant's passes, and
 * the tenant's next start passes once a run of its ends; a malformed flag is a usage error.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { baton, startServe } from './cli-child.js';

const AGENT = ['--agent', 'test/cli/fixtures/human-agent.ts'];

describe('limit flags of baton serve', () => {
  it('--runs-per-tenant: a start over the cap is 429 run.tenant_limit, per tenant, until a run ends', async () => {
    const dir = tempDir();
    const effects = join(dir, 'effects.jsonl');
    writeFileSync(effects, '');
    const tokens = join(dir, 'tokens.json');
    const ACME = 'tok-acme-0123456789abcdef';
    const GLOBEX = 'tok-globex-0123456789abcd';
    writeFileSync(
      tokens,
      JSON.stringify({
        tokens: [
          { token: ACME, tenant: 'acme', roles: ['submit', 'approve', 'view'], name: 'ann' },
          { token: GLOBEX, tenant: 'globex', roles: ['submit', 'view'], name: 'gus' },
        ],
      }),
    );
    const server = await startServe(
      ['--port', '0', '--db', join(dir, 's.db'), ...AGENT, '--tokens', tokens, '--runs-per-tenant', '1'],
      { env: { HUMAN_EFFECTS: effects } },
    );
    let sessions = 0;
    const start = async (token: string, input: string) => {
      const response = await fetch(`${server.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input, session_id: `s-${(sessions += 1)}` }),
      });
      return {
        status: response.status,
        body: (await response.json()) as { id: string; error?: Record<string, unknown> },
      };
    };
    try {
      expect(server.output()).toMatch(/^Limits: at most 1 run in flight per tenant$/m);
      const first = await start(ACME, 'send');
      expect(first.status).toBe(201);
      const over = await start(ACME, 'send');
      expect(over.status).toBe(429);
      expect(over.body.error).toMatchObject({
        code: 'run.tenant_limit',
        details: { tenant_id: 'acme', runs_per_tenant: 1 },
      });
      // Nothing of it written: acme has one run.
      const listed = await fetch(`${server.url}/v1/runs`, { headers: { authorization: `Bearer ${ACME}` } });
      expect(((await listed.json()) as { runs: unknown[] }).runs).toHaveLength(1);
      expect((await start(GLOBEX, 'send')).status).toBe(201);
      // The first run waits for its approval: approved, it ends, and acme may start again.
      await waitUntil(async () => {
        const shown = await fetch(`${server.url}/v1/runs/${first.body.id}`, {
          headers: { authorization: `Bearer ${ACME}` },
        });
        return ((await shown.json()) as { status: string }).status === 'waiting_human';
      }, 'the first run waiting for approval');
      const approved = await baton(['approve', first.body.id, '--url', server.url, '--token', ACME]);
      expect(approved.code, approved.stderr).toBe(0);
      await waitUntil(async () => (await start(ACME, 'send')).status === 201, 'a start of acme accepted again');
    } finally {
      await server.stop();
    }
  });

  it('refuses malformed limit flags before it opens anything', async () => {
    const dir = tempDir();
    for (const [flags, message] of [
      [['--runs-per-tenant', '0'], '--runs-per-tenant must be a positive integer'],
      [['--model-rate', '5'], '--model-rate must be <calls>/<duration>'],
      [['--model-rate', '5/soon'], '--model-rate'],
      [['--model-concurrency', '-1'], '--model-concurrency must be a positive integer'],
    ] as const) {
      const outcome = await baton(['serve', '--port', '0', '--db', join(dir, 'x.db'), ...flags]);
      expect(outcome.code, outcome.stderr).toBe(2);
      expect(outcome.stderr).toContain(message);
    }
  });
});
