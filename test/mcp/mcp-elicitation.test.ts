/**
 * MCP servers that ask a person, against the real note server (`--asking`): `rename_note` answers
 * with the 2026-07-28 `input_required` result (the call stops, the run waits holding nothing, the
 * call is sent again with the answer and the echoed state), `publish_note` sends an
 * `elicitation/create` request while its call stays open (the question waits in flight, the run
 * stays `executing`, the answer goes back on the open request). Each is answered, refused, and
 * carried across a restart (SIGKILL for the in-flight one: its question is closed and the call,
 * idempotent, asks again), with the server's journal counting every call and effect.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BatonError, createScriptedPlanner, type Decision, type Runtime } from '../../src/index.js';
import { readJournal } from '../helpers/mcp-journal.js';
import { httpNotes, mcpFixtures, stdioNotes } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempDir } from '../helpers/temp.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { REPO_ROOT } from '../helpers/run-node.js';

const CHILD = join(REPO_ROOT, 'test/helpers/mcp-child.ts');
const { children, toolset } = mcpFixtures();

const script = (tool: string, args: Record<string, unknown>): Decision[] => [
  { type: 'tool_calls', calls: [{ tool, args }] },
  { type: 'final', answer: 'done' },
];
const journalOf = (journal: string, kind: string, tool: string) =>
  readJournal(journal).filter((e) => e.kind === kind && e.tool === tool);

async function expectFailure(promise: Promise<unknown>, code: string): Promise<BatonError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(BatonError);
  expect((error as BatonError).code).toBe(code);
  return error as BatonError;
}

function setup(tool: string, args: Record<string, unknown>) {
  const dir = tempDir();
  const journal = join(dir, 'journal.jsonl');
  const db = join(dir, 'baton.db');
  return { dir, journal, db, decisions: script(tool, args) };
}

async function asking(runtime: Runtime, runId: string) {
  await waitUntil(async () => (await runtime.get(runId)).pendingInput !== null, 'the question');
  return runtime.get(runId);
}

describe('an MCP server that answers input_required (2026-07-28)', () => {
  it('stops the call, waits for the answer holding nothing, then sends the call again with it once', async () => {
    const { journal, db, decisions } = setup('rename_note', { title: 'draft' });
    const notes = await toolset(stdioNotes(journal, false, false, true));
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'rename the draft' });
    const waiting = await runtime.wait(run.id);
    expect(waiting).toMatchObject({ status: 'waiting_human', waitReason: 'input' });
    expect(waiting.pendingInput).toMatchObject({
      question: "New title for 'draft'?",
      schema: { type: 'object', required: ['title'] },
      from: { tool: 'rename_note', server: 'notes', inFlight: false },
      role: 'approve',
    });
    // The call stopped: nothing happened on the server, and the ledger says it waits.
    expect(journalOf(journal, 'call', 'rename_note')).toHaveLength(1);
    expect(journalOf(journal, 'effect', 'rename_note')).toHaveLength(0);
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({ tool: 'rename_note', status: 'waiting' });
    // The server's state is its own: it is kept, never shown.
    const approval = (await runtime.approvals(run.id)).find((a) => a.id === waiting.pendingInput!.id)!;
    expect(approval.request).not.toHaveProperty('state');

    // An answer the server's schema refuses changes nothing.
    const bad = await expectFailure(
      runtime.answer(run.id, waiting.pendingInput!.id, { answer: { title: '' }, by: 'alice' }),
      'input.invalid',
    );
    expect(bad.failure.details?.issues).toBeDefined();
    expect((await runtime.get(run.id)).status).toBe('waiting_human');

    await runtime.answer(run.id, waiting.pendingInput!.id, { answer: { title: 'final' }, by: 'alice' });
    const done = await runtime.wait(run.id);
    expect(done.status).toBe('succeeded');
    const sent = journalOf(journal, 'call', 'rename_note');
    expect(sent).toHaveLength(2);
    expect(sent[1]!.args.answer).toEqual({ action: 'accept', content: { title: 'final' } });
    expect(Buffer.from(String(sent[1]!.args.state), 'base64').toString()).toBe(JSON.stringify({ title: 'draft' }));
    expect(journalOf(journal, 'effect', 'rename_note').map((e) => e.args)).toEqual([{ title: 'draft', to: 'final' }]);
    // One idempotency key for both rounds: they are one call.
    expect(new Set(sent.map((e) => e.key)).size).toBe(1);
    const [row] = await runtime.toolCalls(run.id);
    expect(row).toMatchObject({ status: 'succeeded', result: { content: 'renamed draft to final' } });
    await expectFailure(
      runtime.answer(run.id, waiting.pendingInput!.id, { answer: { title: 'again' }, by: 'bob' }),
      'approval.already_decided',
    );
    const types = (await eventsOf(runtime, run.id)).map((e) => e.type);
    expect(types).toContain('input_request');
    expect(types).toContain('input_result');
  });

  it('a refused question fails the call without sending it again, and the model is told', async () => {
    const { journal, db, decisions } = setup('rename_note', { title: 'draft' });
    const notes = await toolset(stdioNotes(journal, false, false, true));
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'rename the draft' });
    const waiting = await runtime.wait(run.id);
    await runtime.decide(run.id, waiting.pendingInput!.id, { decision: 'reject', by: 'alice', reason: 'keep it' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    const [row] = await runtime.toolCalls(run.id);
    expect(row!.status).toBe('failed');
    expect(String(row!.result?.content)).toContain('alice did not answer its question: keep it');
    expect(journalOf(journal, 'call', 'rename_note')).toHaveLength(1);
    expect(journalOf(journal, 'effect', 'rename_note')).toHaveLength(0);
  });

  it('a run cancelled while the call waits for its answer fails the call as never completed', async () => {
    const { journal, db, decisions } = setup('rename_note', { title: 'draft' });
    const notes = await toolset(stdioNotes(journal, false, false, true));
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'rename the draft' });
    await runtime.wait(run.id);
    await runtime.cancel(run.id, { reason: 'not now' });
    expect((await runtime.get(run.id)).status).toBe('failed');
    const [row] = await runtime.toolCalls(run.id);
    expect(row!.status).toBe('failed');
    expect(String(row!.result?.content)).toContain('before its question was answered');
    expect(journalOf(journal, 'effect', 'rename_note')).toHaveLength(0);
  });

  it('survives a SIGKILL while it waits: another process answers and the call is sent once (HTTP)', async () => {
    const { journal, db, decisions } = setup('rename_note', { title: 'draft' });
    const server = await httpNotes(journal, undefined, undefined, undefined, undefined, true);
    children.push(server);
    const child = await spawnUntilJsonLine<{ run_id: string }>(CHILD, [
      JSON.stringify({ db, url: server.first.url, script: decisions }),
    ]);
    children.push(child);
    await waitUntil(() => child.lines().some((l) => l.status === 'waiting_human'), 'the wait');
    expect(await child.kill()).toBe('SIGKILL');

    const notes = await toolset({ url: server.first.url });
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const runId = child.first.run_id;
    const waiting = await runtime.get(runId);
    expect(waiting.pendingInput).toMatchObject({ from: { tool: 'rename_note', inFlight: false } });
    await runtime.answer(runId, waiting.pendingInput!.id, { answer: { title: 'kept' }, by: 'carol' });
    expect((await runtime.wait(runId)).status).toBe('succeeded');
    expect(journalOf(journal, 'call', 'rename_note')).toHaveLength(2);
    expect(journalOf(journal, 'effect', 'rename_note').map((e) => e.args)).toEqual([{ title: 'draft', to: 'kept' }]);
  });
});

describe('an MCP server that asks during the call (elicitation/create)', () => {
  it('asks a person while the call stays open and sends the answer back on it', async () => {
    const { journal, db, decisions } = setup('publish_note', { title: 'plan' });
    const notes = await toolset(stdioNotes(journal, false, false, true));
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'publish the plan' });
    // wait() returns once a person is asked, here too: the run executes while its call waits.
    const open = await runtime.wait(run.id);
    expect(open.status).toBe('executing');
    expect(open.pendingInput).toMatchObject({
      question: "Who may read 'plan'?",
      schema: { properties: { audience: { enum: ['team', 'public'] } } },
      from: { tool: 'publish_note', server: 'notes', inFlight: true },
    });
    expect(journalOf(journal, 'effect', 'publish_note')).toHaveLength(0);
    await expectFailure(
      runtime.answer(run.id, open.pendingInput!.id, { answer: { audience: 'everyone' }, by: 'alice' }),
      'input.invalid',
    );
    await runtime.answer(run.id, open.pendingInput!.id, { answer: { audience: 'team' }, by: 'alice' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(journalOf(journal, 'call', 'publish_note')).toHaveLength(1);
    expect(journalOf(journal, 'effect', 'publish_note').map((e) => e.args)).toEqual([
      { title: 'plan', audience: 'team' },
    ]);
    const [row] = await runtime.toolCalls(run.id);
    expect(row).toMatchObject({ status: 'succeeded', result: { content: 'published plan to team' } });
    const results = (await eventsOf(runtime, run.id)).filter((e) => e.type === 'input_result');
    expect(results.map((e) => e.data)).toEqual([
      expect.objectContaining({ answer: { audience: 'team' }, by: 'alice' }),
    ]);
    expect((await runtime.get(run.id)).pendingInput).toBeNull();
  });

  it('a refusal reaches the server as decline, which fails the call', async () => {
    const { journal, db, decisions } = setup('publish_note', { title: 'plan' });
    const notes = await toolset(stdioNotes(journal, false, false, true));
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'publish the plan' });
    const open = await asking(runtime, run.id);
    await runtime.decide(run.id, open.pendingInput!.id, { decision: 'reject', by: 'alice' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    expect(journalOf(journal, 'answer', 'publish_note').map((e) => e.args.action)).toEqual(['decline']);
    expect(journalOf(journal, 'effect', 'publish_note')).toHaveLength(0);
    expect((await runtime.toolCalls(run.id))[0]).toMatchObject({ status: 'failed' });
  });

  it('an unanswered question expires (the tool override sets how long): the server is told cancel', async () => {
    const { journal, db, decisions } = setup('publish_note', { title: 'plan' });
    const notes = await toolset(stdioNotes(journal, false, false, true), {
      overrides: { publish_note: { expiresIn: 300 } },
    });
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'publish the plan' });
    expect((await runtime.wait(run.id)).pendingInput).toMatchObject({ from: { inFlight: true } });
    await waitUntil(async () => (await runtime.get(run.id)).status === 'succeeded', 'the run to go on');
    expect(journalOf(journal, 'answer', 'publish_note').map((e) => e.args.action)).toEqual(['cancel']);
    expect(journalOf(journal, 'effect', 'publish_note')).toHaveLength(0);
    const [wait] = (await runtime.approvals(run.id)).filter((a) => a.kind === 'input');
    expect(wait).toMatchObject({ status: 'expired', decidedBy: 'baton:expiry' });
    await expectFailure(
      runtime.answer(run.id, wait!.id, { answer: { audience: 'team' }, by: 'late' }),
      'approval.expired',
    );
  });

  it('a call its server ends while the question is open closes the question; the run goes on', async () => {
    const { journal, db } = setup('quick_publish', {});
    const decisions: Decision[] = [
      { type: 'tool_calls', calls: [{ tool: 'quick_publish', args: { title: 'plan', wait_ms: 300 } }] },
      { type: 'final', answer: 'done' },
    ];
    const notes = await toolset(stdioNotes(journal, false, false, true));
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const run = await runtime.start({ input: 'publish the plan quickly' });
    await waitUntil(async () => (await runtime.get(run.id)).status === 'succeeded', 'the run to finish');
    const [row] = await runtime.toolCalls(run.id);
    expect(row!.status).toBe('failed');
    expect(String(row!.result?.content)).toContain('not published');
    const [wait] = (await runtime.approvals(run.id)).filter((a) => a.kind === 'input');
    expect(wait).toMatchObject({ status: 'rejected', decidedBy: 'baton:call-ended' });
    await expectFailure(
      runtime.answer(run.id, wait!.id, { answer: { audience: 'team' }, by: 'late' }),
      'approval.already_decided',
    );
  });

  it('after a SIGKILL the question is closed and the idempotent call asks again: one effect (HTTP)', async () => {
    const { journal, db, decisions } = setup('publish_note', { title: 'plan' });
    const server = await httpNotes(journal, undefined, undefined, undefined, true, true);
    children.push(server);
    const child = await spawnUntilJsonLine<{ run_id: string }>(CHILD, [
      JSON.stringify({ db, url: server.first.url, script: decisions }),
    ]);
    children.push(child);
    const pendingQuestions = () => {
      const file = new Database(db, { readonly: true, fileMustExist: true });
      try {
        return file.prepare("select id from approvals where kind = 'input' and status = 'pending'").all() as {
          id: string;
        }[];
      } finally {
        file.close();
      }
    };
    await waitUntil(() => pendingQuestions().length === 1, 'the question in flight');
    const [first] = pendingQuestions();
    expect(await child.kill()).toBe('SIGKILL');

    const notes = await toolset({ url: server.first.url });
    const runtime = openRuntime({ database: db, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const runId = child.first.run_id;
    // Recovered: the old request is gone, so its question is closed and the call asks anew.
    await waitUntil(async () => {
      const pending = (await runtime.get(runId)).pendingInput;
      return pending !== null && pending.id !== first!.id;
    }, 'the question asked again');
    const again = await runtime.get(runId);
    expect(again.pendingInput!.id).toMatch(/\.elicit2\.1$/);
    await expectFailure(
      runtime.answer(runId, first!.id, { answer: { audience: 'public' }, by: 'alice' }),
      'approval.already_decided',
    );
    await runtime.answer(runId, again.pendingInput!.id, { answer: { audience: 'public' }, by: 'alice' });
    expect((await runtime.wait(runId)).status).toBe('succeeded');
    expect(journalOf(journal, 'effect', 'publish_note').map((e) => e.args)).toEqual([
      { title: 'plan', audience: 'public' },
    ]);
    const events = await eventsOf(runtime, runId);
    const closed = events.find((e) => e.type === 'input_result' && e.data.input_id === first!.id);
    expect(closed?.data).toMatchObject({ decision: 'closed', by: 'baton:call-ended' });
    const action = events.filter((e) => e.type === 'action');
    expect(action.at(-1)?.data).toMatchObject({ recovery: 'rerun', cause: 'interrupted' });
  });
});

describe.each(ALL_DIALECTS)('a question in flight answered by another process (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it('the answer is written to the wait and the process holding the call sends it to the server', async () => {
    const dir = tempDir();
    const journal = join(dir, 'journal.jsonl');
    const { database } = await freshDatabaseOf(dialect);
    const decisions = script('publish_note', { title: 'plan' });
    const server = await httpNotes(journal, undefined, undefined, undefined, true, true);
    children.push(server);
    const child = await spawnUntilJsonLine<{ run_id: string }>(CHILD, [
      JSON.stringify({ db: database, url: server.first.url, script: decisions }),
    ]);
    children.push(child);
    const runId = child.first.run_id;

    // Another process on the same database, with its own connection to the server.
    const notes = await toolset({ url: server.first.url });
    const runtime = openRuntime({ database, planner: createScriptedPlanner(decisions), tools: notes.tools });
    const open = await asking(runtime, runId);
    expect(open).toMatchObject({ status: 'executing', pendingInput: { from: { inFlight: true } } });
    await expectFailure(
      runtime.answer(runId, open.pendingInput!.id, { answer: { audience: 'nobody' }, by: 'dave' }),
      'input.invalid',
    );
    const decided = await runtime.answer(runId, open.pendingInput!.id, { answer: { audience: 'team' }, by: 'dave' });
    expect(decided).toMatchObject({ status: 'approved', decidedBy: 'dave' });
    await expectFailure(
      runtime.answer(runId, open.pendingInput!.id, { answer: { audience: 'public' }, by: 'erin' }),
      'approval.already_decided',
    );
    await waitUntil(() => child.lines().some((l) => l.status === 'succeeded'), 'the run driven by the child');
    expect(journalOf(journal, 'effect', 'publish_note').map((e) => e.args)).toEqual([
      { title: 'plan', audience: 'team' },
    ]);
    const results = (await eventsOf(runtime, runId)).filter((e) => e.type === 'input_result');
    expect(results.map((e) => e.data)).toEqual([expect.objectContaining({ answer: { audience: 'team' }, by: 'dave' })]);
  });
});
