/**
 * MCP calls across crashes, against the real note server: Baton SIGKILLed while a destructive
 * call waits for approval and while an unsafe call is in flight, the server crashing mid-call
 * (an idempotent call runs again with the same key on the restarted server; an unsafe one waits
 * for a human), and an HTTP server that restarted (the next call reconnects).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type Decision } from '../../src/index.js';
import type { McpToolsOptions } from '../../src/tools/mcp/index.js';
import { readJournal } from '../helpers/mcp-journal.js';
import { httpNotes, mcpFixtures, stdioNotes } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { scaled } from '../helpers/limits.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempDir } from '../helpers/temp.js';
import { REPO_ROOT } from '../helpers/run-node.js';

const CHILD = join(REPO_ROOT, 'test/helpers/mcp-child.ts');
const { children, toolset } = mcpFixtures();

async function httpServer(journal: string, port?: number, staleSession?: 400 | 404, sse?: boolean) {
  const server = await httpNotes(journal, port, undefined, staleSession, sse);
  children.push(server);
  return server;
}

const call = (tool: string, args: Record<string, unknown>): Decision => ({
  type: 'tool_calls',
  calls: [{ tool, args }],
});
const calls = (journal: string, tool: string) =>
  readJournal(journal).filter((e) => e.kind === 'call' && e.tool === tool);

/** Runs the Baton child until it prints its run id (and, when `until` says, more), keeping it up. */
async function batonChild(
  input: { db: string; url: string; script: Decision[]; overrides?: McpToolsOptions['overrides'] },
  until: (lines: Record<string, unknown>[]) => boolean,
) {
  const child = await spawnUntilJsonLine<{ run_id: string }>(CHILD, [JSON.stringify(input)]);
  children.push(child);
  await waitUntil(() => until(child.lines()), 'the Baton child');
  return child;
}

describe('MCP calls across crashes', () => {
  it('a destructive call approved after Baton was SIGKILLed in the wait reaches the server once (HTTP)', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const db = join(dir, 'baton.db');
    const server = await httpServer(journal);
    const script = [
      call('put_note', { title: 'old', body: 'x' }),
      call('delete_note', { title: 'old' }),
      { type: 'final', answer: 'cleaned up' } as Decision,
    ];
    const child = await batonChild({ db, url: server.first.url, script }, (lines) =>
      lines.some((l) => l.status === 'waiting_human'),
    );
    expect(calls(journal, 'delete_note')).toHaveLength(0);
    expect(await child.kill()).toBe('SIGKILL');

    // Baton again, with a new connection to the same server.
    const notes = await toolset({ url: server.first.url });
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(script), tools: notes.tools });
    const runId = child.first.run_id;
    const waiting = await runtime.get(runId);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'approval' });
    await runtime.approve(runId, waiting.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(runId)).status).toBe('succeeded');
    const ledger = await runtime.toolCalls(runId);
    const deletes = calls(journal, 'delete_note');
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.key).toBe(ledger[1]!.id);
    // A second decision on the same approval runs nothing again.
    await expect(runtime.approve(runId, waiting.pendingApprovalId!, { by: 'alice' })).rejects.toMatchObject({
      code: 'approval.already_decided',
    });
    expect(calls(journal, 'delete_note')).toHaveLength(1);
  });

  it('Baton SIGKILLed mid-call of an unsafe MCP tool: the run waits for a human and the server saw one call', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const db = join(dir, 'baton.db');
    const server = await httpServer(journal);
    // The application allows mail without approval; it stays `unsafe` (no annotations).
    const overrides = { send_mail: { risk: 'low' as const } };
    const script = [
      call('send_mail', { to: 'ops@example.com', subject: 'deploy', hold: true }),
      { type: 'final', answer: 'sent' } as Decision,
    ];
    const child = await batonChild({ db, url: server.first.url, script, overrides }, () => true);
    await waitUntil(() => calls(journal, 'send_mail').length === 1, 'the mail call to reach the server');
    expect(await child.kill()).toBe('SIGKILL');

    const notes = await toolset({ url: server.first.url }, { overrides });
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(script), tools: notes.tools });
    const runId = child.first.run_id;
    const run = await runtime.wait(runId);
    expect(run).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
    const [mail] = await runtime.toolCalls(runId);
    expect(mail).toMatchObject({ status: 'unknown', effect: 'unsafe', attempts: 1 });
    expect(calls(journal, 'send_mail').map((e) => e.key)).toEqual([mail!.id]);
    // A human says it went out: recorded as done, never sent again.
    await runtime.approve(runId, run.pendingApprovalId!, { by: 'ops', resolution: 'done' });
    expect((await runtime.wait(runId)).status).toBe('succeeded');
    expect(calls(journal, 'send_mail')).toHaveLength(1);
  });

  it('a stdio server crashing mid-call: the idempotent call runs again with the same key on the restarted server', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const notes = await toolset(stdioNotes(journal));
    const runtime = openRuntime({
      database: join(dir, 'baton.db'),
      planner: createScriptedPlanner([
        call('put_note', { title: 'plan', body: 'ship', crash_first: true }),
        call('read_note', { title: 'plan' }),
        { type: 'final', answer: 'saved' },
      ]),
      tools: notes.tools,
    });
    const run = await runtime.start({ input: 'save the plan' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    const ledger = await runtime.toolCalls(run.id);
    expect(ledger[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(ledger[0]!.result!.content).toBe('plan was already saved');
    expect(ledger[1]!.result!.content).toBe('ship');
    const puts = calls(journal, 'put_note');
    // Two processes saw the call, with one key; the note was written once.
    expect(puts.map((e) => e.key)).toEqual([ledger[0]!.id, ledger[0]!.id]);
    expect(new Set(puts.map((e) => e.pid)).size).toBe(2);
    expect(readJournal(journal).filter((e) => e.kind === 'effect')).toHaveLength(1);
    expect(notes.connects).toBe(2);
    const actions = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'action');
    expect(actions[1]!.data).toMatchObject({ tool: 'put_note', attempt: 2, recovery: 'rerun', cause: 'threw' });
  });

  it('a stdio server killed mid-call of an unsafe tool: the run waits for a human; the server saw one call', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const notes = await toolset(stdioNotes(journal), { overrides: { send_mail: { risk: 'low' } } });
    const runtime = openRuntime({
      database: join(dir, 'baton.db'),
      planner: createScriptedPlanner([
        call('send_mail', { to: 'a@example.com', subject: 'hi', hold: true }),
        call('list_notes', {}),
        { type: 'final', answer: 'done' },
      ]),
      tools: notes.tools,
    });
    const run = await runtime.start({ input: 'mail' });
    await waitUntil(() => calls(journal, 'send_mail').length === 1, 'the mail call to reach the server');
    process.kill(calls(journal, 'send_mail')[0]!.pid, 'SIGKILL');
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({ status: 'unknown' });
    await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'ops', resolution: 'done' });
    // The next call starts a new server process.
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(calls(journal, 'send_mail')).toHaveLength(1);
    expect(calls(journal, 'list_notes')).toHaveLength(1);
    expect(notes.connects).toBe(2);
  });

  it.each([
    ['SSE streams', true],
    ['JSON bodies', false],
  ] as const)(
    'an HTTP server answering with %s SIGKILLed mid-call: the call ends at once as an unknown outcome (connection lost), and after a restart the next call works',
    async (_mode, sse) => {
      const dir = tempDir();
      const journal = join(dir, 'journal.jsonl');
      const server = await httpServer(journal, undefined, undefined, sse);
      const port = Number(new URL(server.first.url).port);
      // A timeout the test would never reach: only noticing the lost connection ends the call.
      const notes = await toolset(
        { url: server.first.url },
        { overrides: { send_mail: { risk: 'low', timeoutMs: scaled(600_000) } } },
      );
      const runtime = openRuntime({
        database: join(dir, 'baton.db'),
        planner: createScriptedPlanner([
          call('send_mail', { to: 'a@example.com', subject: 'hi', hold: true }),
          call('list_notes', {}),
          { type: 'final', answer: 'done' },
        ]),
        tools: notes.tools,
      });
      const run = await runtime.start({ input: 'mail' });
      await waitUntil(() => calls(journal, 'send_mail').length === 1, 'the mail call to reach the server');
      expect(await server.kill()).toBe('SIGKILL');
      const waiting = await runtime.wait(run.id);
      expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
      const [mail] = await runtime.toolCalls(run.id);
      expect(mail).toMatchObject({ status: 'unknown', attempts: 1 });
      expect(mail!.result!.failure).toMatchObject({
        code: 'tool.outcome_unknown',
        message: expect.stringMatching(/connection to MCP server .* was lost mid-call/),
      });
      expect(mail!.result!.failure!.code).not.toBe('tool.timed_out');
      // The server comes back on its port; the human says the mail went out; the next call works.
      await httpServer(journal, port, undefined, sse);
      await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'ops', resolution: 'done' });
      expect((await runtime.wait(run.id)).status).toBe('succeeded');
      const ledger = await runtime.toolCalls(run.id);
      expect(ledger[1]).toMatchObject({ tool: 'list_notes', status: 'succeeded', attempts: 1 });
      expect(calls(journal, 'send_mail')).toHaveLength(1);
      expect(calls(journal, 'list_notes')).toHaveLength(1);
      expect(notes.connects).toBe(2);
    },
  );

  it('a timed-out MCP call is an unknown outcome: an unsafe one waits for a human, and the server was told to cancel', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    // A limit the held call cannot meet: the tool's configured timeout, not a wait of the test.
    const notes = await toolset(stdioNotes(journal), { overrides: { send_mail: { risk: 'low', timeoutMs: 300 } } });
    const runtime = openRuntime({
      database: join(dir, 'baton.db'),
      planner: createScriptedPlanner([call('send_mail', { to: 'b@example.com', subject: 'x', hold: true })]),
      tools: notes.tools,
    });
    const run = await runtime.start({ input: 'mail' });
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'uncertain_side_effect' });
    const [mail] = await runtime.toolCalls(run.id);
    expect(mail).toMatchObject({ status: 'unknown', result: { failure: { code: 'tool.timed_out' } } });
    const request = (await eventsOf(runtime, run.id)).find((e) => e.type === 'approval_request');
    expect(request!.data).toMatchObject({ reason: 'uncertain_side_effect', cause: 'timed_out' });
    expect(calls(journal, 'send_mail')).toHaveLength(1);
    await waitUntil(
      () => readJournal(journal).some((e) => e.kind === 'cancelled' && e.key === mail!.id),
      'the server to hear the cancellation',
    );
  });

  it.each([404, 400] as const)(
    'reconnects to an HTTP server that restarted and answers a stale session %i; while it is down, a call is unavailable and nothing is sent',
    async (staleSession) => {
      const dir = tempDir();
      const journal = join(dir, 'journal.jsonl');
      const first = await httpServer(journal);
      const port = Number(new URL(first.first.url).port);
      const notes = await toolset({ url: first.first.url });
      const runtime = openRuntime({
        database: join(dir, 'baton.db'),
        planner: createScriptedPlanner([call('list_notes', {}), { type: 'final', answer: 'listed' }]),
        tools: notes.tools,
      });
      const listed = async () => {
        const run = await runtime.start({ input: 'list' });
        await runtime.wait(run.id);
        return (await runtime.toolCalls(run.id))[0]!;
      };
      expect((await listed()).status).toBe('succeeded');
      await first.kill();
      const down = await listed();
      expect(down).toMatchObject({ status: 'failed', result: { failure: { code: 'tool.unavailable' } } });
      const second = await httpServer(journal, port, staleSession);
      // The restarted server does not know the old session (404, or 400 as server-everything says):
      // a new one is made, and the call goes through.
      expect((await listed()).status).toBe('succeeded');
      expect(calls(journal, 'list_notes')).toHaveLength(2);
      expect(notes.connects).toBe(2);
      // Restarted again with no call in between: the client still holds the old session, which the
      // new server answers as stale; the call goes through on a new session all the same.
      await second.kill();
      await httpServer(journal, port, staleSession);
      expect((await listed()).status).toBe('succeeded');
      expect(calls(journal, 'list_notes')).toHaveLength(3);
      expect(notes.connects).toBe(3);
    },
  );
});
