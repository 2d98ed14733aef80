import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/cli/index.js';
import { ARCHIVE_DIR, DEMO_CONFIGS, DEMO_INSTRUCTIONS, STALE_AFTER_DAYS } from '../../src/demo/index.js';
import { startFakeOpenAI, textReply, toolCallsReply } from '../helpers/fake-openai.js';
import { createScriptedPlanner } from '../../src/index.js';
import { CLI_MAIN, runNode } from '../helpers/run-node.js';
import { openRuntime } from '../helpers/runtime.js';
import { tempDir } from '../helpers/temp.js';

const STALE = DEMO_CONFIGS.filter((c) => c.ageDays > STALE_AFTER_DAYS).map((c) => c.name);
const FRESH = DEMO_CONFIGS.filter((c) => c.ageDays <= STALE_AFTER_DAYS).map((c) => c.name);

/** Runs `baton demo` in a child process on a fresh temp dir. */
async function demo(flags: string[], dir = tempDir()) {
  const db = join(dir, 'b.db');
  const configs = join(dir, 'configs');
  const outcome = await runNode([CLI_MAIN, 'demo', ...flags, '--db', db, '--dir', configs]);
  return { ...outcome, db, configs };
}

/** The run id, status and answer printed by the text summary. */
function summaryOf(stdout: string) {
  const run = /^Run (run_\S+) (\w+)/m.exec(stdout);
  return { runId: run?.[1] ?? '', status: run?.[2], answer: /^Answer: (.*)$/m.exec(stdout)?.[1] };
}

/** The run as a runtime opened on the demo's database reports it. */
async function storedRun(db: string, runId: string) {
  const runtime = openRuntime({ database: db, planner: createScriptedPlanner([]), tools: [], recover: false });
  return { run: await runtime.get(runId), approvals: await runtime.approvals(runId) };
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
}

/** In-process streams for commands that fail before opening anything. */
function memoryIo() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const io: CliIo = { stdin: new PassThrough(), stdout, stderr, interactive: false };
  return { io, out: () => String(stdout.read() ?? ''), err: () => String(stderr.read() ?? '') };
}

describe('baton demo', () => {
  it('archives the stale configs and leaves the fresh ones when approved', async () => {
    const { code, stdout, stderr, db, configs } = await demo(['--approve']);

    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^\[\d+\] planning → executing$/m);
    expect(stdout).toMatch(/^\[\d+\] executing → waiting_human/m);
    expect(stdout).toMatch(/^\[\d+\] approval approved by cli:/m);
    const summary = summaryOf(stdout);
    expect(summary.status).toBe('succeeded');
    expect(summary.answer).toMatch(/^Archived 3 stale configs/);
    expect(files(join(configs, ARCHIVE_DIR))).toEqual(STALE);
    expect(files(configs)).toEqual(FRESH);

    const { run, approvals } = await storedRun(db, summary.runId);
    expect(run.status).toBe('succeeded');
    expect(run.answer).toBe(summary.answer);
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ status: 'approved', decidedBy: expect.stringMatching(/^cli:/) });
  });

  it('tells the model and archives nothing when rejected', async () => {
    const { code, stdout, stderr, db, configs } = await demo(['--reject']);

    expect(code, stderr).toBe(0);
    const summary = summaryOf(stdout);
    expect(summary.status).toBe('succeeded');
    expect(summary.answer).toMatch(/^Nothing was archived/);
    expect(files(configs)).toEqual([...STALE, ...FRESH].sort());
    expect(readdirSync(configs)).not.toContain(ARCHIVE_DIR);

    const { run, approvals } = await storedRun(db, summary.runId);
    expect(run).toMatchObject({ status: 'succeeded', stopReason: null, answer: summary.answer });
    expect(approvals[0]).toMatchObject({ status: 'rejected', reason: 'rejected with --reject' });
  });

  it('rejects when stdin is not a terminal and no decision flag is given', async () => {
    const { code, stdout, stderr, configs } = await demo([]);

    expect(code).toBe(0);
    expect(stderr).toMatch(/stdin is not a terminal.*rejecting/);
    expect(summaryOf(stdout).answer).toMatch(/^Nothing was archived/);
    expect(files(configs)).toEqual([...STALE, ...FRESH].sort());
  });

  it('prints one JSON object per line with --json, ending with a summary', async () => {
    const { code, stdout, stderr, db } = await demo(['--json', '--approve']);

    expect(code, stderr).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const objects = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const events = objects.slice(0, -1);
    const summary = objects.at(-1)!;
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.find((e) => e.type === 'approval_request')).toBeDefined();
    expect(events.at(-1)).toMatchObject({ type: 'state', data: { from: 'executing', to: 'succeeded' } });
    // The shapes of `baton run --json` and the API: snake_case events, a summary holding the run.
    expect(Object.keys(events[0]!).sort()).toEqual(['created_at', 'data', 'run_id', 'seq', 'type']);
    expect(summary).toMatchObject({ type: 'summary', run: { status: 'succeeded', usage: { llm_calls: 4 } } });
    const reported = summary.run as { id: string; status: string; answer: string; session_id: string };

    const { run } = await storedRun(db, reported.id);
    expect(run).toMatchObject({ status: reported.status, answer: reported.answer, sessionId: reported.session_id });
  });

  it('can run again on the same directory: archived configs are regenerated, in a new session', async () => {
    const dir = tempDir();
    const first = await demo(['--approve'], dir);
    const second = await demo(['--approve'], dir);

    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(`(wrote ${STALE.join(', ')})`);
    expect(summaryOf(second.stdout).status).toBe('succeeded');
    expect(files(join(second.configs, ARCHIVE_DIR))).toEqual(STALE);
    expect(files(second.configs)).toEqual(FRESH);
    const a = (await storedRun(first.db, summaryOf(first.stdout).runId)).run;
    const b = (await storedRun(second.db, summaryOf(second.stdout).runId)).run;
    expect(b.sessionId).not.toBe(a.sessionId);
  });
});

describe('baton command line', () => {
  it('prints the usage with --help and exits 0', async () => {
    const { io, out } = memoryIo();
    expect(await runCli(['--help'], io)).toBe(0);
    expect(out()).toMatch(/^Usage: baton <command>/);
  });

  it('exits 2 with a message on an unknown command', async () => {
    const { io, err } = memoryIo();
    expect(await runCli(['deploy'], io)).toBe(2);
    expect(err()).toContain("unknown command 'deploy'");
  });

  it('exits 2 on an unknown option or on --approve with --reject', async () => {
    const unknown = memoryIo();
    expect(await runCli(['demo', '--force'], unknown.io)).toBe(2);
    expect(unknown.err()).toContain("Unknown option '--force'");
    const both = memoryIo();
    expect(await runCli(['demo', '--approve', '--reject'], both.io)).toBe(2);
    expect(both.err()).toContain('cannot be used together');
  });

  it('plans with a model at --base-url when one is given, and archives what it chose', async () => {
    const server = await startFakeOpenAI();
    try {
      server.enqueue(
        toolCallsReply([{ name: 'fs__list', arguments: { path: '.' } }]),
        toolCallsReply(STALE.map((name) => ({ name: 'fs__read', arguments: { path: name } }))),
        toolCallsReply([{ name: 'configs__archive', arguments: { files: STALE } }]),
        textReply(`Archived ${STALE.join(', ')}.`),
      );
      const { code, stdout, stderr, configs } = await demo([
        '--approve',
        '--base-url',
        server.baseURL,
        '--model',
        'fake',
      ]);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain(`Planner: model fake at ${server.baseURL}`);
      expect(summaryOf(stdout)).toMatchObject({ status: 'succeeded', answer: `Archived ${STALE.join(', ')}.` });
      expect(files(join(configs, ARCHIVE_DIR))).toEqual([...STALE].sort());
      expect(files(configs)).toEqual([...FRESH].sort());
      expect(server.requests).toHaveLength(4);
      const first = server.requests[0]!.body as { model: string; messages: { role: string; content: string }[] };
      expect(first.model).toBe('fake');
      expect(first.messages[0]).toEqual({ role: 'system', content: DEMO_INSTRUCTIONS });
    } finally {
      await server.close();
    }
  });
});
