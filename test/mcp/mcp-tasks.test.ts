/**
 * MCP tools run as tasks, against a real SDK server that runs its tool as a task
 * (`test/helpers/mcp-task-server.ts`): the call saves the task's handle in its ledger row before
 * it waits, the run then waits for the task holding no actor (reason `task`, polled when due),
 * the task's status messages are `progress` events, and its result is the call's. A Baton killed
 * once the handle is saved, while the run waits, or once a poll found the task ended, is followed
 * by one that polls the same task: the server sees one call. A run cancelled while its task runs
 * cancels the task at the server.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import { createMcpTools } from '../../src/tools/mcp/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { scaled } from '../helpers/limits.js';
import { mcpFixtures } from '../helpers/mcp.js';
import { reportOptions } from '../helpers/mcp-task-agent.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { spawnChild, spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';

const SERVER = 'test/helpers/mcp-task-server.ts';
const CHILD = 'test/helpers/mcp-task-child.ts';

type Entry = { kind: 'create' | 'get' | 'result' | 'cancel'; task_id: string; topic?: string };

function journalOf(file: string): Entry[] {
  try {
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Entry);
  } catch {
    return [];
  }
}

/** Releases the task and resumes the run in a new process: it succeeds, and the server saw one task, polled to its end. */
async function resumeOnce(database: string, url: string, journal: string) {
  writeFileSync(`${journal}.release`, '');
  const resumed = await spawnChild(CHILD, [JSON.stringify({ database, url, phase: 'resume' })], {
    timeoutMs: scaled(60_000),
  });
  expect(resumed.code, resumed.stderr).toBe(0);
  const outcome = JSON.parse(resumed.stdout.trim()) as { run: string; status: string; answer: string };
  expect(outcome).toMatchObject({ status: 'succeeded', answer: 'got: report on Zog' });
  const entries = journalOf(journal);
  const created = entries.filter((e) => e.kind === 'create');
  expect(created).toHaveLength(1);
  expect(entries.every((e) => e.task_id === created[0]!.task_id)).toBe(true);
  return { outcome, entries };
}

/** A finished run's ledger and log, read by a runtime that drives nothing. */
async function readRun(database: string, url: string, runId: string) {
  const reports = await createMcpTools({ url });
  const runtime = createRuntime({ ...reportOptions(database, reports), recover: false });
  try {
    return { calls: await runtime.toolCalls(runId), events: await eventsOf(runtime, runId) };
  } finally {
    await runtime.close();
    await reports.close();
  }
}

describe.each(ALL_DIALECTS)('MCP tools run as tasks (%s)', (dialect) => {
  skipUnlessAvailable(dialect);
  const fixtures = mcpFixtures();

  async function startServer(journal = join(tempFiles().dir, 'tasks.jsonl'), port?: number) {
    const args = ['--journal', journal, ...(port ? ['--port', String(port)] : [])];
    const server = await spawnUntilJsonLine<{ url: string; pid: number }>(SERVER, args);
    fixtures.children.push(server);
    return { journal, url: server.first.url, server };
  }

  it('saves the task handle before it waits, tells its progress, and takes its result', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const { journal, url } = await startServer();
    const reports = await fixtures.toolset({ url });
    expect(reports.tools.map((t) => t.name)).toEqual(['build_report']);
    expect(reports.skipped).toEqual([]);
    const runtime = openRuntime(reportOptions(database, reports));
    const run = await runtime.start({ input: 'a report on Zog' });
    // The task's handle is durable with the call (the server's own reads come before it answers).
    await waitUntil(async () => (await runtime.toolCalls(run.id))[0]?.handle != null, 'the handle to be saved');
    const taskId = journalOf(journal).find((e) => e.kind === 'create')!.task_id;
    // The run waits for its task holding nothing: no actor, not even in memory between polls.
    await waitUntil(
      async () => (await runtime.get(run.id)).waitReason === 'task' && runtime.stats().liveRuns === 0,
      'the run to wait for its task out of memory',
    );
    const waiting = await runtime.get(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'task' });
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({ tool: 'build_report', status: 'waiting', attempts: 1 });
    expect(call!.handle).toEqual({ kind: 'mcp_task', server: 'reports', task_id: taskId });
    // No person decides that wait.
    await expect(runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'ops' })).rejects.toMatchObject({
      failure: { code: 'approval.wrong_decision' },
    });
    // The runtime polls it while it waits (the server sees more looks than the call's own one).
    await waitUntil(() => journalOf(journal).filter((e) => e.kind === 'get').length >= 3, 'the runtime to poll');
    const progress = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'progress');
    // Told once, however many polls saw the same status.
    expect(progress.map((e) => e.data)).toEqual([
      { tool_call_id: call!.id, tool: 'build_report', progress: null, total: null, message: 'building' },
    ]);

    writeFileSync(`${journal}.release`, '');
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'got: report on Zog' });
    expect(journalOf(journal).filter((e) => e.kind === 'create')).toHaveLength(1);
    const events = await eventsOf(runtime, run.id);
    expect(events.filter((e) => e.type === 'task').map((e) => e.data.status)).toEqual(['waiting', 'succeeded']);
    expect(events.filter((e) => e.type === 'action')).toHaveLength(1);
    const [settled] = await runtime.toolCalls(run.id);
    expect(settled).toMatchObject({ status: 'succeeded', attempts: 1 });
  });

  it.each(['task.polled', 'task.ended'] as const)(
    'resumes a run killed while it waits for its task (%s) by polling the same task: one call at the server',
    async (point) => {
      const { database } = await freshDatabaseOf(dialect);
      const { journal, url } = await startServer();
      const { dir } = tempFiles();
      const log = join(dir, 'failpoints.log');
      const killing = spawnChild(CHILD, [JSON.stringify({ database, url, phase: 'start' })], {
        env: { BATON_FAILPOINTS: `${point}=kill`, BATON_FAILPOINTS_LOG: log },
        timeoutMs: scaled(60_000),
      });
      if (point === 'task.ended') {
        // Released once the run waits for its task (its call let go after its own first look),
        // read from the database alone: a runtime here might poll the task itself.
        const { store, opened } = openStore(database);
        await opened;
        try {
          await waitUntil(async () => {
            const [run] = await store.listRuns({ limit: 1 });
            return run?.wait_reason === 'task';
          }, 'the run to wait for its task');
        } finally {
          await store.close();
        }
        writeFileSync(`${journal}.release`, '');
      }
      const killed = await killing;
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      expect(readFileSync(log, 'utf8')).toBe(`${point}=kill@1\n`);

      const { outcome } = await resumeOnce(database, url, journal);
      const { calls, events } = await readRun(database, url, outcome.run);
      // Called once: the task was polled, never called again.
      expect(calls[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
      expect(events.filter((e) => e.type === 'action')).toHaveLength(1);
      expect(events.filter((e) => e.type === 'task').map((e) => e.data.status)).toEqual(['waiting', 'succeeded']);
    },
  );

  it('follows the same task after a SIGKILL once its handle is saved: one call at the server', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const { journal, url } = await startServer();
    const { dir } = tempFiles();
    const log = join(dir, 'failpoints.log');
    const killed = await spawnChild(CHILD, [JSON.stringify({ database, url, phase: 'start' })], {
      env: { BATON_FAILPOINTS: 'tool.handle_saved=kill', BATON_FAILPOINTS_LOG: log },
      timeoutMs: scaled(60_000),
    });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(readFileSync(log, 'utf8')).toBe('tool.handle_saved=kill@1\n');
    const created = journalOf(journal).find((e) => e.kind === 'create');
    expect(created).toMatchObject({ kind: 'create', topic: 'Zog' });

    const { outcome, entries } = await resumeOnce(database, url, journal);
    expect(entries.filter((e) => e.kind === 'result')).toHaveLength(1);
    const { calls, events } = await readRun(database, url, outcome.run);
    expect(calls[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    const actions = events.filter((e) => e.type === 'action');
    expect(actions.map((e) => e.data.handle ?? null)).toEqual([
      null,
      { kind: 'mcp_task', server: 'reports', task_id: created!.task_id },
    ]);
    expect(actions.map((e) => e.data.recovery ?? null)).toEqual([null, 'followed']);
  });

  it('cancels the task at the server when its run is cancelled', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const { journal, url } = await startServer();
    const reports = await fixtures.toolset({ url });
    const runtime = openRuntime(reportOptions(database, reports));
    const run = await runtime.start({ input: 'a report on Zog' });
    // The task's handle is durable with the call (the server's own reads come before it answers).
    // The run waits for its task, out of memory: the cancel reaches it from the file.
    await waitUntil(async () => (await runtime.get(run.id)).waitReason === 'task', 'the run to wait for its task');
    const cancelled = await runtime.cancel(run.id);
    expect(cancelled).toMatchObject({ status: 'failed', stopReason: 'cancelled' });
    const taskId = journalOf(journal).find((e) => e.kind === 'create')!.task_id;
    await waitUntil(
      () => journalOf(journal).some((e) => e.kind === 'cancel' && e.task_id === taskId),
      'the task to be cancelled at the server',
    );
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({ status: 'unknown', handle: { kind: 'mcp_task', task_id: taskId } });
  });

  it('polls on through its server being down; a task the server lost is dropped, and the idempotent call starts anew', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const first = await startServer();
    const reports = await fixtures.toolset({ url: first.url });
    const runtime = openRuntime(reportOptions(database, reports));
    const run = await runtime.start({ input: 'a report on Zog' });
    await waitUntil(async () => (await runtime.get(run.id)).waitReason === 'task', 'the run to wait for its task');
    // The server goes down mid-task: the run keeps polling (never "unavailable, nothing sent").
    await first.server.kill();
    const port = Number(new URL(first.url).port);
    const polls = journalOf(first.journal).length;
    // Polls that find no one keep the wait (later each time), the call's row and its handle.
    await waitUntil(async () => {
      const [wait] = (await runtime.approvals(run.id)).filter((a) => a.kind === 'task');
      return wait?.status === 'pending' && wait.expiresAt !== null && wait.expiresAt > Date.now() + 600;
    }, 'a poll to find the server down');
    expect(await runtime.get(run.id)).toMatchObject({ status: 'waiting_human', waitReason: 'task' });
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({ status: 'waiting', attempts: 1 });
    // It comes back on the same port without the task (an in-memory store): the call drops the
    // handle and, idempotent, calls again with the same key: a new task, which completes.
    const second = await startServer(join(tempFiles().dir, 'tasks.jsonl'), port);
    // The new task is let finish only once the run waits for it (else, on a busy machine, it may
    // be done at the call's first look, and there is no second wait to see).
    await waitUntil(
      async () => (await eventsOf(runtime, run.id)).filter((e) => e.type === 'task').length === 3,
      'the run to wait for the new task',
    );
    writeFileSync(`${second.journal}.release`, '');
    const done = await runtime.wait(run.id);
    expect(done).toMatchObject({ status: 'succeeded', answer: 'got: report on Zog' });
    expect(journalOf(first.journal)).toHaveLength(polls);
    expect(journalOf(second.journal).filter((e) => e.kind === 'create')).toHaveLength(1);
    const [call] = await runtime.toolCalls(run.id);
    expect(call).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(call!.handle).toMatchObject({
      task_id: journalOf(second.journal).find((e) => e.kind === 'create')!.task_id,
    });
    const events = await eventsOf(runtime, run.id);
    expect(events.filter((e) => e.type === 'result').map((e) => e.data.status)).toEqual(['unknown', 'succeeded']);
    // The lost task ended the first wait; the new one was waited for too.
    expect(events.filter((e) => e.type === 'task').map((e) => e.data.status)).toEqual([
      'waiting',
      'unknown',
      'waiting',
      'succeeded',
    ]);
  });

  it('tells the model a task that failed without a result, with its message', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const { url } = await startServer();
    const reports = await fixtures.toolset({ url });
    const runtime = openRuntime(reportOptions(database, reports, 'doom'));
    const done = await runtime.wait((await runtime.start({ input: 'a report on doom' })).id);
    expect(done.status).toBe('succeeded');
    const [call] = await runtime.toolCalls(done.id);
    expect(call).toMatchObject({ status: 'failed', attempts: 1 });
    expect(done.answer).toMatch(/^got: .*MCP task \S+ of 'build_report' failed: quota exceeded/);
  });
});
