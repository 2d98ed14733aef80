/**
 * Spans reach a real OTLP/HTTP receiver on loopback through the real exporter, from a process that
 * exits right after `runtime.close()`: close flushes the registered provider.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import { spawnChild } from '../helpers/spawn-child.js';
import { tempFiles } from '../helpers/temp.js';

interface OtlpSpan {
  name: string;
  kind: number;
  traceId: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}

const receivers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of receivers.splice(0)) await close();
});

/** An OTLP/HTTP (JSON) trace receiver on 127.0.0.1: every span of every request it got. */
async function otlpReceiver() {
  const spans: OtlpSpan[] = [];
  const read = (req: IncomingMessage) =>
    new Promise<string>((resolve) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => resolve(body));
    });
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        const parsed = JSON.parse(body) as {
          resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
        };
        for (const resource of parsed.resourceSpans)
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
};

describe('OpenTelemetry export at exit', () => {
  it('exports every span of a run through a batch processor before a process that exits right after close()', async () => {
    const receiver = await otlpReceiver();
    const { db, effects } = tempFiles();
    const child = await spawnChild('test/helpers/otlp-child.ts', [JSON.stringify({ db, effects, url: receiver.url })], {
      timeoutMs: scaled(120_000),
    });
    expect(child.code, child.stderr).toBe(0);
    const { runId, status } = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { runId: string; status: string };
    expect(status).toBe('succeeded');
    const names = receiver.spans.map((s) => s.name).sort();
    expect(names).toEqual([
      'baton.approval',
      'chat scripted-model',
      'chat scripted-model',
      'chat scripted-model',
      'execute_tool world.read',
      'execute_tool world.read',
      'execute_tool world.unsafe',
      'invoke_agent baton',
    ]);
    expect(new Set(receiver.spans.map((s) => s.traceId)).size).toBe(1);
    for (const span of receiver.spans) expect(attribute(span, 'baton.run.id')).toBe(runId);
    // A model call is a CLIENT span (kind 3) naming its provider and the agent; tool spans know their step.
    const chats = receiver.spans.filter((s) => s.name.startsWith('chat '));
    for (const chat of chats) {
      expect(chat.kind).toBe(3);
      expect(attribute(chat, 'gen_ai.provider.name')).toBe('baton');
      expect(attribute(chat, 'gen_ai.agent.name')).toBe('tracer');
    }
    expect(chats.map((c) => attribute(c, 'baton.step')).sort()).toEqual([0, 1, 2]);
    const tools = receiver.spans.filter((s) => s.name.startsWith('execute_tool '));
    expect(tools.map((t) => [t.name, attribute(t, 'baton.step')]).sort()).toEqual([
      ['execute_tool world.read', 0],
      ['execute_tool world.read', 1],
      ['execute_tool world.unsafe', 0],
    ]);
    for (const tool of tools) expect(tool.kind).toBe(1);
  });
});
