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
 * A ```ts block of the README (the first one after `heading`, or the first of all), pointed at
 * this checkout's source and a temp database, and the lines its `console.log(…); // output`
 * comments promise, in order.
 */
function readmeExample(database: string, heading?: string): { code: string; block: string; expected: string[] } {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const from = heading === undefined ? 0 : readme.indexOf(`\n${heading}\n`);
  expect(from, `README.md has a section '${heading}'`).toBeGreaterThanOrEqual(0);
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from))?.[1] ?? '';
  expect(block, 'README.md has a ```ts block').not.toBe('');
  expect(block).toMatch(/from 'baton-runtime'/);
  expect(block).toMatch(/database: '[^']*'/);
  const expected = [...block.matchAll(/console\.log\(.*\); \/\/ (.+)$/gm)].map((m) => m[1]!);
  expect(expected.length, 'the example says what it prints').toBeGreaterThan(0);
  const source = pathToFileURL(join(REPO_ROOT, 'src', 'index.ts')).href;
  const machines = pathToFileURL(join(REPO_ROOT, 'machines', 'index.ts')).href;
  const code = block
    .replaceAll(`from 'baton-runtime'`, `from ${JSON.stringify(source)}`)
    .replaceAll(`from 'baton-runtime/machines'`, `from ${JSON.stringify(machines)}`)
    .replace(/database: '[^']*'/, `database: ${JSON.stringify(database)}`);
  return { code, block, expected };
}

/** Writes an example inside the repo (so its own imports, zod and xstate, resolve) and runs it. */
async function runExample(code: string) {
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(REPO_ROOT, '.tmp', 'readme-'));
  scratch.push(dir);
  const file = join(dir, 'example.ts');
  writeFileSync(file, code);
  return runNode([file]);
}

const squash = (text: string) => text.replace(/\s+/g, ' ').trim();

describe('README', () => {
  it('runs its embedding example to a printed answer', async () => {
    const example = readmeExample(join(tempDir(), 'readme.db'));
    const { code, stdout, stderr } = await runExample(example.code);
    expect(code, stderr).toBe(0);
    expect(stdout.trim().split('\n')).toEqual(example.expected);
    expect(stdout).toContain('succeeded');
  });

  it('runs its machine variant example, the same variant the model-based tests cover', async () => {
    const example = readmeExample(join(tempDir(), 'variant.db'), '## Machine variants');
    const fixture = readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'two-approvers.ts'), 'utf8');
    const variant = fixture.split('// --- README: two-approvers ---')[1]!.split('// --- end ---')[0]!;
    expect(squash(example.block)).toContain(squash(variant.replace('export const', 'const')));
    const { code, stdout, stderr } = await runExample(example.code);
    expect(code, stderr).toBe(0);
    expect(stdout.trim().split('\n')).toEqual(['approval.refused', 'old_orders is gone']);
    expect(example.expected).toEqual(['approval.refused', 'old_orders is gone']);
  });

  it('runs its agents-that-call-agents example: the child answers, the parent reports it', async () => {
    const example = readmeExample(join(tempDir(), 'tree.db'), '## Agents that call agents');
    const { code, stdout, stderr } = await runExample(example.code);
    expect(code, stderr).toBe(0);
    expect(stdout.trim().split('\n')).toEqual(example.expected);
    expect(example.expected).toEqual(['Report: Zog has 3 moons', 'researcher succeeded', '4']);
  });

  it('runs its handoff example: billing plans while handed the conversation, then triage again', async () => {
    const example = readmeExample(join(tempDir(), 'handoff.db'), '### Handoffs');
    const { code, stdout, stderr } = await runExample(example.code);
    expect(code, stderr).toBe(0);
    expect(stdout.trim().split('\n')).toEqual(example.expected);
    expect(example.expected).toEqual(['Done: {"refunded":"A1"}', 'triage,billing,billing,triage']);
  });
});
