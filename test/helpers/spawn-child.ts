/** Spawns a script (a TypeScript helper through tsx, or the built CLI) as a real child process and reports how it ended. */
import { spawn } from 'node:child_process';
import { nodeArgs, REPO_ROOT } from './run-node.js';

/** How a child process ended, and what it printed. */
export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the parent killed it: after `killAfterMs`, or because it outlived `timeoutMs`. */
  killedByParent: boolean;
  timedOut: boolean;
}

/** Options of one child. */
export interface ChildOptions {
  /** Extra environment; `BATON_FAILPOINTS*` is otherwise removed so a child arms only what it is given. */
  env?: Record<string, string>;
  /** SIGKILL the child this many milliseconds after it was spawned (a crash at a random instant). */
  killAfterMs?: number;
  /** SIGKILL the child if it is still running then, and report `timedOut`. */
  timeoutMs?: number;
}

/** Runs `script` with `args` in a child Node process until it exits or is killed; never rejects on a crash. */
export function spawnChild(script: string, args: string[], options: ChildOptions = {}): Promise<ChildOutcome> {
  const env = { ...process.env };
  delete env.BATON_FAILPOINTS;
  delete env.BATON_FAILPOINTS_LOG;
  Object.assign(env, options.env);
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeArgs(script), ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let killedByParent = false;
    let timedOut = false;
    const kill = () => {
      killedByParent = true;
      proc.kill('SIGKILL');
    };
    const killer = options.killAfterMs === undefined ? undefined : setTimeout(kill, options.killAfterMs);
    const guard =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            kill();
          }, options.timeoutMs);
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code, signal) => {
      clearTimeout(killer);
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr, killedByParent, timedOut });
    });
  });
}

/** A child that has printed its first JSON line and is still running, until `kill()`. */
export interface RunningChild<T> {
  /** The first line it printed that starts with `{`, parsed. */
  first: T;
  /** Every JSON line it printed so far, parsed. */
  lines(): Record<string, unknown>[];
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** SIGKILLs it; resolves with the signal it died of. */
  kill(): Promise<NodeJS.Signals | null>;
  /** Sends it `signal` (a graceful stop by default) and resolves with how it exited. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `script` with `args` and resolves once it prints its first JSON line (it keeps
 * running); rejects if it exits first, with what it wrote to stderr.
 */
export function spawnUntilJsonLine<T>(
  script: string,
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<RunningChild<T>> {
  const env = { ...process.env };
  delete env.BATON_FAILPOINTS;
  delete env.BATON_FAILPOINTS_LOG;
  Object.assign(env, options.env);
  const child = spawn(process.execPath, [...nodeArgs(script), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const exited = ended.then(({ signal }) => signal);
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split('\n').find((l, i, all) => l.startsWith('{') && i < all.length - 1);
      if (!line) return;
      resolve({
        first: JSON.parse(line) as T,
        lines: () =>
          stdout
            .split('\n')
            .filter((l) => l.startsWith('{') && l.endsWith('}'))
            .map((l) => JSON.parse(l) as Record<string, unknown>),
        stderr: () => stderr,
        kill: () => {
          child.kill('SIGKILL');
          return exited;
        },
        stop: (signal = 'SIGTERM') => {
          child.kill(signal);
          return ended;
        },
      });
    });
    void exited.then((signal) =>
      reject(new Error(`${script} ended (${signal}) before printing a JSON line: ${stderr}`)),
    );
  });
}
