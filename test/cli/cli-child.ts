/** The built `baton` CLI as a child process (`node dist/src/cli/main.js`), one-shot or as a server. */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import { runCli, type CliIo } from '../../src/cli/index.js';
import { scaled } from '../helpers/limits.js';
import { CLI_MAIN, REPO_ROOT } from '../helpers/run-node.js';

/** What a finished command did. */
export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child: nothing from this machine's model, server or failpoint settings. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(OPENAI_|BATON_)/.test(name)) delete env[name];
  }
  return { ...env, ...extra };
}

/** Loaded beside tsx so that a TypeScript agent module runs on the CLI's own (built) modules. */
const DIST_SOURCES = fileURLToPath(new URL('../helpers/dist-sources.js', import.meta.url));

/**
 * The `node` arguments that run `baton <args>`, from any working directory: the built CLI, with
 * a TypeScript loader only when an argument names a `.ts` file (an agent module), which then
 * gets Baton's modules from dist/ too.
 */
export function cliArgs(args: string[]): string[] {
  const loaders = args.some((arg) => /\.[cm]?ts$/.test(arg))
    ? ['--import', import.meta.resolve('tsx'), '--import', DIST_SOURCES]
    : [];
  return [...loaders, CLI_MAIN, ...args];
}

/** Runs `baton <args>` to its end (in `cwd`, default the repo), stdin closed (not a terminal); never rejects. */
export function baton(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
) {
  return new Promise<CliOutcome>((resolve) => {
    const child = execFile(
      process.execPath,
      cliArgs(args),
      {
        cwd: options.cwd ?? REPO_ROOT,
        env: childEnv(options.env),
        encoding: 'utf8',
        timeout: options.timeoutMs ?? scaled(20_000),
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

/** The JSON lines of an output, parsed (throws on a line that is not JSON). */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A running `baton serve`. */
export interface ServeChild {
  url: string;
  proc: ChildProcessWithoutNullStreams;
  output(): string;
  /** Sends `signal` and resolves with the exit code and how long the exit took. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; ms: number }>;
}

/** Starts `baton serve <args>` (`--json` too) and resolves once it has reported its URL and set-up. */
export function startServe(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<ServeChild> {
  const proc = spawn(process.execPath, cliArgs(['serve', ...args]), {
    cwd: options.cwd ?? REPO_ROOT,
    env: childEnv(options.env),
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`baton serve did not start:\n${output}`));
    }, scaled(60_000));
    proc.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let listening = false;
    proc.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // The first line names the URL; the start-up report ends with the `Auth:` line (with
      // --json, the lines are {"type":"listening","url":…} and {"type":"started",…}).
      const match =
        /^Listening on (http:\/\/\S+)$/m.exec(output) ??
        /^\{"type":"listening","url":"(http:\/\/[^"]+)"\}$/m.exec(output);
      if (listening || !match?.[1] || !/^(Auth: |\{"type":"started",.*\}\n)/m.test(output)) return;
      listening = true;
      clearTimeout(timer);
      resolve({
        url: match[1],
        proc,
        output: () => output,
        async stop(signal = 'SIGTERM') {
          const started = Date.now();
          proc.kill(signal);
          const code = await exited;
          return { code, ms: Date.now() - started };
        },
      });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`baton serve exited with ${code}:\n${output}`));
    });
  });
}

/** Runs `baton <args>` in this process with in-memory streams (for checks that need no real terminal or exit). */
export async function batonInProcess(args: string[]): Promise<CliOutcome> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const io: CliIo = { stdin: new PassThrough(), stdout, stderr, interactive: false };
  const code = await runCli(args, io);
  return { code, stdout: String(stdout.read() ?? ''), stderr: String(stderr.read() ?? '') };
}
