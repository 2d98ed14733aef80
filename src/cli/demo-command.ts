/**
 * `baton demo`: runs the demo agent on a generated config directory, prints every event as it
 * is committed, and puts the archive approval to the user (or to `--approve` / `--reject`).
 */
import { resolve } from 'node:path';
import { resolveAgentPlanner } from '../agent/index.js';
import { DEMO_AGENT, DEMO_TOOLS, ensureDemoConfigs, toDemoStartRequest } from '../demo/index.js';
import { BatonError, createFailure, toFailure } from '../failure.js';
import { createRuntime, type Run, type RunEventRecord, type Runtime } from '../index.js';
import { toEventJson, toRunJson } from './api-json.js';
import { askYesNo } from './ask.js';
import { reportError, usageError, writeFailure } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { toEventLine } from './format-event.js';
import { describeDatabase, maskCredentials } from './mask.js';
import { databaseOf } from './open-backend.js';
import { cliUser } from './os-user.js';
import { parseFlags, takePositionals } from './parse-flags.js';
import { terminalText } from './terminal-text.js';

/** The demo's usage text. */
export const DEMO_USAGE = `Usage: baton demo [--db <file>|<postgres-url>] [--dir <dir>] [--approve | --reject] [--json]
                  [--model <name>] [--base-url <url>]

Runs the built-in demo agent: it lists the configs in <dir>, reads the ones not modified
for 90 days, asks for approval to move the stale ones into <dir>/archive/, and reports.
Each invocation starts a new run in a new session; archived demo configs are regenerated.

Options:
  --db <db>     SQLite database file (default ./.baton/baton.db) or postgres://… URL
  --dir <dir>   config directory, generated if missing (default ./.baton/demo-configs)
  --approve     approve the archive without asking
  --reject      reject the archive without asking
  --json        print one JSON object per event, then a JSON summary line
  --model <name>    model to plan with (default $OPENAI_MODEL, else gpt-4.1-mini)
  --base-url <url>  an OpenAI-compatible endpoint (default $OPENAI_BASE_URL)
  -h, --help    show this help

With OPENAI_API_KEY or OPENAI_BASE_URL set (or --base-url), a model plans the run through
the OpenAI-compatible API; otherwise a built-in scripted planner does, with no key needed.
Without --approve or --reject the approval is asked on the terminal; when stdin is not a
terminal, it is rejected. Exit status: 0 when the run succeeded, 1 when it failed or could
not run, 2 on a usage error, 130 when interrupted at the approval prompt.
`;

interface FollowOptions {
  approve: boolean;
  reject: boolean;
  json: boolean;
  /** Who decides approvals: `cli:<os user>`. */
  by: string;
}

type Verdict = { approve: true } | { approve: false; reason: string } | 'interrupted';

function fileCount(request: RunEventRecord | undefined): number {
  const calls = (request?.data.tool_calls as { args?: { files?: unknown } }[] | undefined) ?? [];
  return calls.reduce((n, c) => n + (Array.isArray(c.args?.files) ? c.args.files.length : 0), 0);
}

async function decide(options: FollowOptions, request: RunEventRecord | undefined, io: CliIo): Promise<Verdict> {
  if (options.approve) return { approve: true };
  if (options.reject) return { approve: false, reason: 'rejected with --reject' };
  if (!io.interactive) {
    io.stderr.write('baton demo: stdin is not a terminal and neither --approve nor --reject was given: rejecting.\n');
    return { approve: false, reason: 'no terminal to ask (pass --approve or --reject)' };
  }
  // In JSON mode stdout carries only JSON lines, so the question goes to stderr.
  const output = options.json ? io.stderr : io.stdout;
  const answer = await askYesNo(`Approve archiving ${fileCount(request)} files? [y/N] `, io.stdin, output);
  if (answer === 'interrupted') return 'interrupted';
  return answer === 'yes' ? { approve: true } : { approve: false, reason: 'declined at the prompt' };
}

/** Follows a run's events to its end, deciding approvals on the way; false if interrupted. */
async function follow(runtime: Runtime, run: Run, options: FollowOptions, io: CliIo): Promise<boolean> {
  const requests = new Map<string, RunEventRecord>();
  let drafting = false;
  for await (const event of runtime.events(run.id)) {
    if (event.type === 'draft' && !options.json) {
      // Model text as it streams: shown inline, never the answer (that comes with the end).
      io.stdout.write(`${drafting ? '' : '  … '}${terminalText(String(event.data.text))}`);
      drafting = true;
      continue;
    }
    if (drafting) io.stdout.write('\n');
    drafting = false;
    // The same shapes as `baton run --json` and the HTTP API: snake_case all the way down.
    io.stdout.write(`${options.json ? JSON.stringify(toEventJson(event)) : toEventLine(event)}\n`);
    if (event.type === 'approval_request') requests.set(String(event.data.approval_id), event);
    // Decide once the run is durably waiting: the `state` event carries the approval's id.
    if (event.type !== 'state' || event.data.to !== 'waiting_human') continue;
    const approvalId = String(event.data.approval_id);
    const verdict = await decide(options, requests.get(approvalId), io);
    if (verdict === 'interrupted') return false;
    if (verdict.approve) await runtime.approve(run.id, approvalId, { by: options.by });
    else await runtime.reject(run.id, approvalId, { by: options.by, reason: verdict.reason });
  }
  return true;
}

function summarize(run: Run, io: CliIo, json: boolean): void {
  if (json) {
    io.stdout.write(`${JSON.stringify({ type: 'summary', run: toRunJson(run) })}\n`);
    return;
  }
  if (run.answer !== null) io.stdout.write(`\nAnswer: ${terminalText(run.answer)}\n`);
  if (run.failure) io.stdout.write(`Failure: ${run.failure.code}: ${terminalText(run.failure.message)}\n`);
  io.stdout.write(`Run ${run.id} ${run.status}${run.stopReason ? ` (${run.stopReason})` : ''}\n`);
}

/** Writes the demo configs into `dir`; a path that cannot be that directory is the user's to fix. */
function demoConfigsIn(dir: string): string[] {
  try {
    return ensureDemoConfigs(dir);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new BatonError(
      createFailure('input.invalid', `Cannot use '${dir}' as the demo's config directory: ${reason}`, {
        details: { path: dir },
      }),
    );
  }
}

/** Runs `baton demo` with its arguments; resolves with the exit code. */
export async function runDemoCommand(argv: string[], io: CliIo): Promise<number> {
  let values;
  try {
    const parsed = parseFlags(argv, {
      db: { type: 'string', default: './.baton/baton.db' },
      dir: { type: 'string', default: './.baton/demo-configs' },
      approve: { type: 'boolean', default: false },
      reject: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
    takePositionals(parsed.positionals, { required: [] });
    values = parsed.values;
  } catch (error) {
    return reportError('demo', error, io.stderr, argv);
  }
  if (values.help) {
    io.stdout.write(DEMO_USAGE);
    return 0;
  }
  if (values.approve && values.reject) {
    return reportError('demo', usageError('--approve and --reject cannot be used together'), io.stderr, argv);
  }
  const dir = resolve(values.dir);
  const database = databaseOf(values.db);
  const by = cliUser();
  let runtime: Runtime | undefined;
  try {
    const written = demoConfigsIn(dir);
    if (!values.json) {
      io.stdout.write(`Configs: ${dir}${written.length > 0 ? ` (wrote ${written.join(', ')})` : ''}\n`);
      io.stdout.write(`Database: ${describeDatabase(database)}\n`);
    }
    const { planner, description } = resolveAgentPlanner(DEMO_AGENT, {
      model: values.model,
      baseURL: values['base-url'],
    });
    if (!values.json) io.stdout.write(`Planner: ${description}\n`);
    // Only this invocation's run is driven here: resuming older runs is for another command.
    runtime = createRuntime({ database, planner, tools: DEMO_TOOLS, agent: DEMO_AGENT.name, recover: false });
    const run = await runtime.start(toDemoStartRequest(dir, by));
    const finished = await follow(runtime, run, { ...values, by }, io);
    const final = await runtime.get(run.id);
    if (!finished) {
      io.stderr.write(`\nInterrupted: run ${run.id} stays ${final.status} in ${describeDatabase(database)}\n`);
      return 130;
    }
    summarize(final, io, values.json);
    return final.status === 'succeeded' ? 0 : 1;
  } catch (error) {
    const failure = toFailure(error);
    const message = maskCredentials(failure.message, [database]);
    writeFailure(io.stderr, 'baton demo', { ...failure, message }, { json: values.json });
    return 1;
  } finally {
    await runtime?.close();
  }
}
