/** Runs a TypeScript entry point in a child Node process (through tsx), as a user would. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root, from this file's location (CI runs in another clone path). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** What a child process did. */
export interface NodeOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node --import tsx <args>` from the repo root (where `tsx` resolves), stdin closed; never rejects. */
export function runNode(args: string[], options: { timeoutMs?: number } = {}): Promise<NodeOutcome> {
  const env = { ...process.env };
  delete env.BATON_FAILPOINTS;
  // The machine's own model settings must not turn a scripted run into a model run.
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_MODEL;
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', ...args],
      { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: options.timeoutMs ?? 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}
