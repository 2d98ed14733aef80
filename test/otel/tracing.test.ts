/**
 * OpenTelemetry spans of runs, read with the SDK's exporters: a run with an approval in one
 * process, and the same across two SIGKILLs (three processes), where every span is present once,
 * under the run's `invoke_agent` span, in the one trace its id names; the GenAI attributes; the
 * caller's `traceparent` as a link; no content unless asked for; nothing without a provider.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batonIdGenerator, createScriptedPlanner, runTraceIds, type RuntimeOptions } from '../../src/index.js';
import { openRuntime } from '../helpers/runtime.js';
import { startTestServer, token } from '../helpers/server.js';
import { spawnChild } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';
import { tracedRun } from '../helpers/traced-run.js';
import { treeOptions } from '../helpers/tree-agents.js';
import { createShop, SHOP_SCRIPT } from '../helpers/shop.js';
import { createMcpTools } from '../../src/tools/mcp/index.js';
import { stdioNotes } from '../helpers/mcp.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  idGenerator: batonIdGenerator,
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
beforeAll(() => trace.setGlobalTracerProvider(provider));
afterAll(() => trace.disable());

function setup(database: string, effects: string, extra: Partial<RuntimeOptions> = {}): RuntimeOptions {
  return { database, ...tracedRun(effects), ...extra };
}

interface SpanLine {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  phase?: string;
}

/** The spans of one run's trace, checked for the shape every run's trace has. */
function expectRunTrace(spans: SpanLine[], runId: string) {
  const ids = runTraceIds(runId);
  const mine = spans.filter((s) => s.traceId === ids.traceId);
  expect(mine.length).toBe(spans.filter((s) => s.attributes['baton.run.id'] === runId).length);
  const roots = mine.filter((s) => s.name === 'invoke_agent baton');
  expect(roots).toHaveLength(1);
  expect(roots[0]).toMatchObject({ spanId: ids.spanId, parentSpanId: null });
  expect(roots[0]!.attributes).toMatchObject({
    'gen_ai.operation.name': 'invoke_agent',
    'baton.run.id': runId,
    'baton.run.status': 'succeeded',
  });
  for (const span of mine.filter((s) => s !== roots[0])) expect(span.parentSpanId).toBe(ids.spanId);
  const chats = mine.filter((s) => s.name.startsWith('chat '));
  expect(chats.map((s) => s.attributes['baton.step'])).toEqual([0, 1]);
  for (const chat of chats) {
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.agent.name': 'default',
    });
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
  }
  expect(chats.map((s) => s.attributes['gen_ai.response.finish_reasons'])).toEqual([['tool_calls'], ['stop']]);
  const tools = mine.filter((s) => s.name.startsWith('execute_tool '));
  for (const tool of tools) {
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool' });
    expect(tool.attributes['baton.tool.risk']).toBe(
      tool.attributes['gen_ai.tool.name'] === 'world.read' ? 'low' : 'high',
    );
  }
  // Each ended call attempt once: no (call id, outcome) twice.
  const keys = tools.map(
    (s) => `${String(s.attributes['gen_ai.tool.call.id'])}:${String(s.attributes['baton.tool.outcome'])}`,
  );
  expect(new Set(keys).size).toBe(keys.length);
  // No content by default.
  for (const span of mine)
    expect(Object.keys(span.attributes).some((k) => k.endsWith('.arguments') || k.endsWith('.result'))).toBe(false);
  return { mine, root: roots[0]!, chats, tools, approvals: mine.filter((s) => s.name === 'baton.approval') };
}

function toLine(span: ReadableSpan): SpanLine {
  return {
    name: span.name,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    attributes: span.attributes as Record<string, unknown>,
    events: span.events.map((e) => ({ name: e.name, attributes: (e.attributes ?? {}) as Record<string, unknown> })),
  };
}

describe('OpenTelemetry spans', () => {
  it('traces a run with an approval: one trace named by the run, GenAI attributes, the decider, a caller link', async () => {
    exporter.reset();
    const { db, effects } = tempFiles();
    const runtime = openRuntime(setup(db, effects));
    const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const run = await runtime.wait((await runtime.start({ input: 'send it', traceparent: caller })).id);
    expect(run.status).toBe('waiting_human');
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    expect((await runtime.wait(run.id)).status).toBe('succeeded');
    await runtime.close();
    const { root, tools, approvals } = expectRunTrace(exporter.getFinishedSpans().map(toLine), run.id);
    const calls = await (async () => tools.map((t) => t.attributes['gen_ai.tool.name']))();
    expect(calls.sort()).toEqual(['world.read', 'world.unsafe']);
    expect(tools.every((t) => t.attributes['baton.tool.outcome'] === 'succeeded')).toBe(true);
    expect(
      tools.find((t) => t.attributes['gen_ai.tool.name'] === 'world.unsafe')!.attributes['baton.tool.effect'],
    ).toBe('unsafe');
    expect(approvals).toHaveLength(1);
    expect(approvals[0]!.attributes).toMatchObject({
      'baton.approval.decision': 'approved',
      'baton.approval.decided_by': 'alice',
    });
    expect(root.events.map((e) => e.attributes['baton.state.to'])).toEqual([
      'planning',
      'executing',
      'waiting_human',
      'executing',
      'planning',
      'executing',
      'succeeded',
    ]);
    const [rootSpan] = exporter.getFinishedSpans().filter((s) => s.name === 'invoke_agent baton');
    expect(rootSpan!.links.map((l) => l.context.traceId)).toEqual(['0af7651916cd43dd8448eb211c80319c']);
  });

  it('keeps one trace, each span once, across two SIGKILLs and three processes', async () => {
    const { db, effects, dir } = tempFiles();
    const spans = join(dir, 'spans.jsonl');
    const arg = (phase: string) => [JSON.stringify({ db, effects, spans, phase })];
    const script = 'test/helpers/otel-child.ts';
    const started = await spawnChild(script, arg('start'), { timeoutMs: scaled(120_000) });
    expect(started.signal).toBe('SIGKILL');
    const { runId } = JSON.parse(started.stdout.trim().split('\n')[0]!) as { runId: string };
    const approved = await spawnChild(script, arg('approve'), { timeoutMs: scaled(120_000) });
    expect(approved.signal).toBe('SIGKILL');
    const finished = await spawnChild(script, arg('finish'), { timeoutMs: scaled(120_000) });
    expect(finished.code).toBe(0);
    expect(JSON.parse(finished.stdout.trim())).toEqual({ status: 'succeeded' });
    expect(readEffects(effects).filter((e) => e.tool === 'world.unsafe')).toHaveLength(1);

    const lines = readFileSync(spans, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SpanLine);
    const { mine, tools, approvals } = expectRunTrace(lines, runId);
    // Written by all three processes, into the one trace.
    expect(new Set(mine.map((s) => s.phase))).toEqual(new Set(['start', 'approve', 'finish']));
    expect(mine.filter((s) => s.phase === 'start').map((s) => s.name)).toEqual(['chat scripted-model']);
    expect(approvals.map((a) => [a.phase, a.attributes['baton.approval.decided_by']])).toEqual([
      ['approve', 'alice'],
      ['finish', 'bob'],
    ]);
    // The unsafe call began in the second process and ended, as a human said, in the third.
    const unsafe = tools.filter((t) => t.attributes['gen_ai.tool.name'] === 'world.unsafe');
    expect(unsafe.map((t) => [t.phase, t.attributes['baton.tool.outcome']])).toEqual([['finish', 'succeeded']]);
    expect(tools.find((t) => t.attributes['gen_ai.tool.name'] === 'world.read')!.phase).toBe('approve');
  });

  it('links the trace of a run started over HTTP to the traceparent of the request; ignores a malformed one', async () => {
    exporter.reset();
    const server = await startTestServer({
      runtime: () => ({ planner: createScriptedPlanner(() => ({ type: 'final', answer: 'ok' })), tools: [] }),
    });
    const started: string[] = [];
    for (const traceparent of ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'not-a-traceparent']) {
      const response = await fetch(`${server.url}/v1/runs?wait=true`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token('acme-submit')}`, 'content-type': 'application/json', traceparent },
        body: JSON.stringify({ input: 'hello' }),
      });
      expect(response.status).toBe(201);
      started.push(((await response.json()) as { id: string }).id);
    }
    await server.close();
    const rootOf = (runId: string) =>
      exporter
        .getFinishedSpans()
        .find((s) => s.name === 'invoke_agent baton' && s.attributes['baton.run.id'] === runId)!;
    const linked = rootOf(started[0]!);
    expect(linked.spanContext().traceId).toBe(runTraceIds(started[0]!).traceId);
    expect(linked.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
      ['4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7'],
    ]);
    expect(rootOf(started[1]!).links).toEqual([]);
  });

  it('records content only when asked, capped', async () => {
    exporter.reset();
    const { db, effects } = tempFiles();
    const runtime = openRuntime(setup(db, effects, { tracing: { content: true, contentChars: 8 } }));
    const run = await runtime.wait((await runtime.start({ input: 'send it' })).id);
    await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    await runtime.wait(run.id);
    await runtime.close();
    const tool = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool world.unsafe')!;
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBe('{"value…');
    const chat = exporter.getFinishedSpans().find((s) => s.name === 'chat scripted-model')!;
    expect(String(chat.attributes['baton.decision'])).toHaveLength(8);
  });

  it('traces each compensation under the run: the call it undoes, its outcome and attempt', async () => {
    exporter.reset();
    const { db, effects } = tempFiles();
    const runtime = openRuntime({
      database: db,
      planner: createScriptedPlanner(SHOP_SCRIPT),
      tools: createShop(effects),
    });
    const run = await runtime.wait((await runtime.start({ input: 'orders' })).id);
    await runtime.cancel(run.id, { compensate: true });
    await runtime.wait(run.id);
    await runtime.close();
    const ids = runTraceIds(run.id);
    const undo = exporter.getFinishedSpans().filter((s) => s.name.startsWith('baton.compensate '));
    expect(undo.map((s) => s.name)).toEqual([
      'baton.compensate shop.charge',
      'baton.compensate shop.archive',
      'baton.compensate shop.charge',
    ]);
    const ledger = await openRuntime({
      database: db,
      planner: createScriptedPlanner(SHOP_SCRIPT),
      tools: createShop(effects),
    }).toolCalls(run.id);
    for (const span of undo) {
      expect(span.spanContext().traceId).toBe(ids.traceId);
      expect(span.parentSpanContext?.spanId).toBe(ids.spanId);
      const row = ledger.find((c) => c.id === span.attributes['gen_ai.tool.call.id'])!;
      expect(span.attributes).toMatchObject({
        'baton.compensation.of': row.compensates,
        'baton.tool.outcome': 'succeeded',
        'baton.tool.attempt': 1,
      });
    }
  });

  it("puts a child run's spans under the execute_tool span of the call that started it, in one trace", async () => {
    exporter.reset();
    const { db, effects } = tempFiles();
    const runtime = openRuntime({ ...treeOptions(db, effects), tracing: true });
    const parent = await runtime.wait((await runtime.start({ input: 'tidy up' })).id);
    const childId = `${parent.id}.s0.c0.child`;
    await runtime.approve(parent.id, parent.childWait!.asking!.pendingApprovalId, { by: 'alice' });
    expect((await runtime.wait(parent.id)).status).toBe('succeeded');
    await runtime.close();
    const spans = exporter.getFinishedSpans().map(toLine);
    const trace = runTraceIds(parent.id).traceId;
    // Every span of both runs is in the parent's trace.
    const ofTree = spans.filter(
      (s) => s.attributes['baton.run.id'] === parent.id || s.attributes['baton.run.id'] === childId,
    );
    expect(ofTree.length).toBeGreaterThan(6);
    for (const span of ofTree) expect(span.traceId).toBe(trace);
    const call = ofTree.find((s) => s.name === 'execute_tool agent.clerk')!;
    expect(call).toMatchObject({ parentSpanId: runTraceIds(parent.id).spanId });
    expect(call.attributes).toMatchObject({ 'baton.child_run.id': childId, 'baton.tool.outcome': 'succeeded' });
    const child = ofTree.find((s) => s.name === 'invoke_agent baton' && s.attributes['baton.run.id'] === childId)!;
    expect(child).toMatchObject({ spanId: runTraceIds(childId).spanId, parentSpanId: call.spanId });
    expect(child.attributes).toMatchObject({ 'gen_ai.agent.name': 'clerk', 'baton.run.status': 'succeeded' });
    // The child's own spans (its model calls, its archive, its approval) are under its run span.
    const inner = ofTree.filter((s) => s.attributes['baton.run.id'] === childId && s !== child);
    expect(inner.map((s) => s.name).sort()).toEqual(
      ['baton.approval', 'chat planner', 'chat planner', 'execute_tool files.archive'].sort(),
    );
    for (const span of inner) expect(span.parentSpanId).toBe(child.spanId);
  });

  it('names the MCP server and tool of an MCP call on its span', async () => {
    exporter.reset();
    const { db, dir } = tempFiles();
    const notes = await createMcpTools(stdioNotes(join(dir, 'journal.jsonl')));
    try {
      const runtime = openRuntime({
        database: db,
        planner: createScriptedPlanner([
          { type: 'tool_calls', calls: [{ tool: 'put_note', args: { title: 't', body: 'b' } }] },
          { type: 'final', answer: 'ok' },
        ]),
        tools: notes.tools,
      });
      await runtime.wait((await runtime.start({ input: 'note' })).id);
      await runtime.close();
    } finally {
      await notes.close();
    }
    const span = exporter.getFinishedSpans().find((s) => s.name === 'execute_tool put_note')!;
    expect(span.attributes).toMatchObject({
      'baton.mcp.server': 'notes',
      'baton.mcp.tool': 'put_note',
      'baton.tool.effect': 'idempotent',
      'baton.tool.outcome': 'succeeded',
    });
  });
});
