/**
 * Running a README section's shell blocks as written: each command line through bash after a
 * prelude (the server's URL, tokens, `RUN=`), and each `# → ` line after it a pattern of what
 * it prints (`…` stands for anything).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI_MAIN } from './run-node.js';
import { expect } from 'vitest';

/** A `# → ` line as a pattern: its text exactly, `…` anything. */
export function pattern(expected: string): RegExp {
  const parts = expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(parts.join('.*?'));
}

export interface Step {
  command: string;
  expected: string[];
}

/** The block's commands with what each prints, and where `RUN=` takes the id of the run started before. */
export function stepsOf(code: string): (Step | { setRun: true })[] {
  const steps: (Step | { setRun: true })[] = [];
  for (const line of code.replace(/\\\n\s*/g, '').split('\n')) {
    const last = steps.at(-1);
    if (line.startsWith('# → ')) {
      expect(last && 'command' in last, `'${line}' follows a command`).toBe(true);
      (last as Step).expected.push(line.slice('# → '.length));
    } else if (/^RUN=/.test(line)) steps.push({ setRun: true });
    else if (line.trim() !== '' && !line.startsWith('#')) steps.push({ command: line, expected: [] });
  }
  return steps;
}

/** Runs `command` through bash after `prelude`; resolves with its exit code and what it printed. */
export function sh(prelude: string[], command: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn('bash', ['-c', [...prelude, command].join('\n')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

/** True when every expected line matches a line of `out`, in order. */
export function shows(out: string, expected: string[]): boolean {
  const lines = out.split('\n');
  let at = 0;
  for (const line of expected) {
    const found = lines.findIndex((l, i) => i >= at && pattern(line).test(l));
    if (found < 0) return false;
    at = found + 1;
  }
  return true;
}

/**
 * The environment the README's lines run in: `baton` on the PATH is this checkout's built CLI
 * (a shim in `dir`), and nothing of this machine's model or Baton settings.
 */
export function shellEnv(dir: string): NodeJS.ProcessEnv {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'baton'), `#!/bin/sh\nexec "${process.execPath}" "${CLI_MAIN}" "$@"\n`);
  chmodSync(join(bin, 'baton'), 0o755);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(OPENAI_|BATON_)/.test(name)),
  ) as NodeJS.ProcessEnv;
  env.PATH = `${bin}:${env.PATH ?? ''}`;
  return env;
}
