/**
 * The README's "Forking and rerunning runs", run as written: its shell block (curl, then the
 * command line) through bash, command by command, against a real `baton serve` of the demo in
 * dev mode, with `$RUN` a finished demo run. Every `# → ` line says what the command before it
 * prints; afterwards the forks the block made are the source's, at the steps it named.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import { readmeBlocks, readmeText } from '../helpers/readme-blocks.js';
import { sh, shellEnv, shows, stepsOf } from '../helpers/readme-shell.js';
import { tempDir } from '../helpers/temp.js';
import { startServe } from './cli-child.js';

const SECTION = '## Forking and rerunning runs';
const README_URL = 'http://127.0.0.1:7420';

describe('README: forking and rerunning runs', () => {
  it('runs its curl and command-line examples as the comments say', { timeout: scaled(180_000) }, async () => {
    const text = readmeText().split('\n');
    const start = text.findIndex((line) => line === SECTION) + 1;
    expect(start, `README.md has '${SECTION}'`).toBeGreaterThan(0);
    const next = text.findIndex((line, i) => i >= start && /^## /.test(line)) + 1;
    const blocks = readmeBlocks().filter((b) => b.line > start && b.line < next && b.lang === 'sh');
    expect(blocks).toHaveLength(1);

    const dir = tempDir();
    const env = shellEnv(dir);
    const server = await startServe(['--port', '0', '--db', join(dir, 'b.db'), '--dir', join(dir, 'configs')]);
    try {
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${server.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return (await response.json()) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      };
      const waiting = await api('POST', '/v1/runs?wait=true', { input: 'Archive the stale configs' });
      await api('POST', `/v1/runs/${waiting.id}/approvals/${waiting.pending_approval_id}`, { decision: 'approve' });
      const deadline = Date.now() + scaled(30_000);
      while ((await api('GET', `/v1/runs/${waiting.id}`)).status !== 'succeeded') {
        if (Date.now() > deadline) throw new Error('the demo run did not finish');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      const prelude = [`URL=${server.url}`, `RUN=${waiting.id as string}`];
      for (const step of stepsOf(blocks[0]!.code)) {
        // The block's own `URL=` is the prelude's, with the test server's address.
        if (!('command' in step) || step.command.startsWith('URL=')) continue;
        const command = step.command.replaceAll(README_URL, server.url);
        const result = await sh(prelude, command, env);
        expect(shows(result.out, step.expected), `${command}\nprinted:\n${result.out}`).toBe(true);
        if (/^baton /.test(command)) expect(result.code, `${command}\n${result.out}`).toBe(0);
      }
      const forks = (await api('GET', `/v1/runs?forked_from=${waiting.id as string}`)).runs as {
        forked_from: { step: number };
      }[];
      expect(forks.map((f) => f.forked_from.step).sort()).toEqual([0, 2, 2, 3]);
    } finally {
      await server.stop();
    }
  });
});
