import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-node.js';
import { tempDir } from '../helpers/temp.js';
import { baton, startServe } from './cli-child.js';

const scratch: string[] = [];

afterAll(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The README's agent module (the first ```ts block under "Writing an agent module"), pointed at this checkout. */
function readmeAgent(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Writing an agent module'));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  expect(block).toMatch(/export default defineAgent\(/);
  const source = pathToFileURL(join(REPO_ROOT, 'src', 'index.ts')).href;
  // Inside the repo, so the module's own imports (zod) resolve from its node_modules.
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'readme-agent-'));
  scratch.push(dir);
  const file = join(dir, 'agent.ts');
  writeFileSync(file, block.replaceAll(`from 'baton-runtime'`, `from ${JSON.stringify(source)}`));
  return file;
}

describe('README: Baton as a service', () => {
  it('serves the agent module example, which refunds only when approved', async () => {
    const server = await startServe(['--port', '0', '--db', join(tempDir(), 'b.db'), '--agent', readmeAgent()]);
    try {
      expect(server.output()).toMatch(/^Agent: support \(planner: scripted/m);
      const [approved, rejected] = await Promise.all([
        baton(['run', 'Refund order A-1001', '--url', server.url, '--approve']),
        baton(['run', 'Refund order A-1001', '--url', server.url, '--reject']),
      ]);

      expect(approved.code, approved.stderr).toBe(0);
      expect(approved.stdout).toMatch(/^\[\d+\] approval needed: orders\.refund \{"orderId":"A-1001"\}$/m);
      expect(approved.stdout).toMatch(/^Answer: Order A-1001 was refunded\.$/m);
      expect(rejected.code, rejected.stderr).toBe(0);
      expect(rejected.stdout).toMatch(/^Answer: Order A-1001 was not refunded\.$/m);
    } finally {
      await server.stop();
    }
  });
});
