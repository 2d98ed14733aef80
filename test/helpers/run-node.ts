/** Runs an entry point in a child Node process (a TypeScript one through tsx), as a user would. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaled } from './limits.js';

/** The repository root, from this file's location (CI runs in another clone path). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The `baton` CLI as users run it: built, in dist/ (the suite's global set-up builds it). A
 * child that compiled src/ through tsx at every start spent most of its time limit doing so on
 * a loaded machine.
 */
export const CLI_MAIN = join(REPO_ROOT, 'dist/src/cli/main.js');

/** The `node` arguments that run `script`: a TypeScript one through tsx (resolved from the repo). */
export function nodeArgs(script: string): string[] {
  return /\.[cm]?ts$/.test(script) ? ['--import', 'tsx', script] : [script];
}

/** What a child process did. */
export interface NodeOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <script> <args>` from the repo root (where `tsx` resolves), stdin closed; never rejects. */
export function runNode(args: string[], options: { timeoutMs?: number } = {}): Promise<NodeOutcome> {
  const [script = '', ...rest] = args;
  const env = { ...process.env };
  delete env.BATON_FAILPOINTS;
  // The machine's own model settings must not turn a scripted run into a model run.
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_MODEL;
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...nodeArgs(script), ...rest],
      { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: options.timeoutMs ?? scaled(60_000) },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}
