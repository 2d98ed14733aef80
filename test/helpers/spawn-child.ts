/** Spawns a TypeScript helper script as a real child process (`node --import tsx`) and reports how it ended. */
import { spawn } from 'node:child_process';
import { REPO_ROOT } from './run-node.js';

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
    const proc = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
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
