import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from './helpers/temp.js';
import { REPO_ROOT, runNode } from './helpers/run-node.js';

const scratch: string[] = [];

afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * The README's first ```ts block, pointed at this checkout's source and a temp database, and the
 * output its `console.log(…); // output` comment promises.
 */
function readmeExample(database: string): { code: string; expected: string } {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  expect(block, 'README.md has a ```ts block').not.toBe('');
  expect(block).toMatch(/from 'baton'/);
  expect(block).toMatch(/database: '[^']*'/);
  const expected = /console\.log\(.*\); \/\/ (.+)$/m.exec(block)?.[1];
  expect(expected, 'the example says what it prints').toBeDefined();
  const source = pathToFileURL(join(REPO_ROOT, 'src', 'index.ts')).href;
  const code = block
    .replaceAll(`from 'baton'`, `from ${JSON.stringify(source)}`)
    .replace(/database: '[^']*'/, `database: ${JSON.stringify(database)}`);
  return { code, expected: expected! };
}

describe('README', () => {
  it('runs its embedding example to a printed answer', async () => {
    const database = join(tempDir(), 'readme.db');
    // Inside the repo, so the example's own imports (zod) resolve from its node_modules.
    mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
    const dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'readme-'));
    scratch.push(dir);
    const file = join(dir, 'example.ts');
    const example = readmeExample(database);
    writeFileSync(file, example.code);

    const { code, stdout, stderr } = await runNode([file]);

    expect(code, stderr).toBe(0);
    expect(stdout.trim()).toBe(example.expected);
    expect(stdout).toContain('succeeded');
  });
});
