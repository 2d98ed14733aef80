/**
 * Spans reach a real OTLP/HTTP receiver on loopback through the real exporter, from a process that
 * exits right after `runtime.close()`: close flushes the registered provider.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { scaled } from '../helpers/limits.js';
import { CLI_MAIN, REPO_ROOT } from '../helpers/run-node.js';
import { spawnChild, spawnUntilJsonLine } from '../helpers/spawn-child.js';
import { tempDir, tempFiles } from '../helpers/temp.js';

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

  it(
    'exports every span of the runs `baton serve` drove when SIGTERM stops it, with a provider preloaded',
    { timeout: scaled(180_000) },
    async () => {
      const receiver = await otlpReceiver();
      const dir = tempDir();
      const serve = await spawnUntilJsonLine<{ url: string }>(
        CLI_MAIN,
        ['serve', '--db', `${dir}/baton.db`, '--dir', `${dir}/configs`, '--port', '0', '--json'],
        {
          env: {
            NODE_OPTIONS: `--import ${JSON.stringify(`${REPO_ROOT}test/helpers/otlp-preload.mjs`)}`,
            BATON_TEST_OTLP_URL: receiver.url,
          },
        },
      );
      const api = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${serve.first.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return (await response.json()) as Record<string, unknown>;
      };
      const runIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = (await api('POST', '/v1/runs', { input: 'Archive the stale configs' })).id as string;
        await expect
          .poll(async () => (await api('GET', `/v1/runs/${id}`)).status, { timeout: scaled(60_000) })
          .toBe('waiting_human');
        const approvalId = (await api('GET', `/v1/runs/${id}`)).pending_approval_id as string;
        await api('POST', `/v1/runs/${id}/approvals/${approvalId}`, { decision: 'approve' });
        await expect
          .poll(async () => (await api('GET', `/v1/runs/${id}`)).status, { timeout: scaled(60_000) })
          .toBe('succeeded');
        runIds.push(id);
      }
      // What the runs did, from the API: the spans must account for all of it.
      const expected = await Promise.all(
        runIds.map(async (id) => ({
          id,
          steps: ((await api('GET', `/v1/runs/${id}/steps`)).steps as unknown[]).length,
          calls: ((await api('GET', `/v1/runs/${id}/tool-calls`)).tool_calls as { id: string }[]).map((c) => c.id),
        })),
      );
      expect(receiver.spans).toHaveLength(0); // the batch still holds them all
      const stopped = await serve.stop('SIGTERM');
      expect(stopped.code, serve.stderr()).toBe(0);

      for (const run of expected) {
        const spans = receiver.spans.filter((s) => attribute(s, 'baton.run.id') === run.id);
        expect(spans.filter((s) => s.name === 'invoke_agent baton')).toHaveLength(1);
        expect(spans.filter((s) => s.name === 'baton.approval')).toHaveLength(1);
        expect(spans.filter((s) => s.name.startsWith('chat '))).toHaveLength(run.steps);
        const toolCallIds = spans
          .filter((s) => s.name.startsWith('execute_tool '))
          .map((s) => attribute(s, 'gen_ai.tool.call.id'));
        expect(toolCallIds.sort()).toEqual([...run.calls].sort());
        for (const span of spans) expect(attribute(span, 'gen_ai.agent.name')).toBe('demo');
      }
      const total = expected.reduce((n, run) => n + 2 + run.steps + run.calls.length, 0);
      expect(receiver.spans).toHaveLength(total);
    },
  );
});
