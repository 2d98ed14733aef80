/** The server in a real child process (`server-child.ts`), for crashes that matter: SIGKILL. */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { REPO_ROOT } from './run-node.js';
import { scaled } from './limits.js';

const SCRIPT = 'test/helpers/server-child.ts';
const children = new Set<ChildProcess>();

afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
});

/** A running server child. */
export interface ServerChild {
  url: string;
  pid: number;
  /** Sends a signal and resolves when the process has exited. */
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the child on `db` (effects recorded in `effects`) and resolves once it prints its URL. */
export function startServerChild(
  files: { db: string; effects: string; port?: number },
  env: Record<string, string>,
): Promise<ServerChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, JSON.stringify(files)], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`The server child did not start: ${stderr}`)), scaled(60_000));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n')[0];
      if (!stdout.includes('\n') || !line) return;
      clearTimeout(timer);
      const { url, pid } = JSON.parse(line) as { url: string; pid: number };
      resolve({
        url,
        pid,
        kill(signal) {
          child.kill(signal);
          return exited;
        },
      });
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`The server child exited (${code ?? signal}) before it listened: ${stderr}`));
    });
  });
}
