/**
 * A worker process for the per-key limit tests: a runtime on a shared database that claims runs
 * and drives them with one step, a call of `remote.call` (at most `limit` at once per key, the
 * run's input), then an answer. The tool posts `{ key, idempotency_key }` to the receiver at
 * `url` and waits for its answer, so the receiver sees every call in flight. It prints
 * `{"type":"ready","owner":…}` once up, then lives until killed.
 */
import { z } from 'zod';
import { createRuntime, defineTool, ToolUnavailableError, type Planner } from '../../src/index.js';

/** What the child is given (one JSON argument). */
export interface LimitsChildConfig {
  database: string;
  url: string;
  limit: number;
  leaseMs: number;
  claimEveryMs: number;
}

const config = JSON.parse(process.argv[2]!) as LimitsChildConfig;

const remote = defineTool({
  name: 'remote.call',
  description: 'Calls a remote service for a key',
  input: z.object({ key: z.string() }),
  effect: 'idempotent',
  risk: 'low',
  timeoutMs: 600_000,
  concurrency: { limit: config.limit, key: ({ key }) => key },
  execute: async ({ key }, ctx) => {
    const response = await fetch(config.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key, idempotency_key: ctx.idempotencyKey }),
      signal: ctx.signal,
    });
    if (!response.ok) throw new ToolUnavailableError(`receiver answered ${response.status}`);
    return (await response.json()) as unknown;
  },
});

const planner: Planner = {
  async next(request) {
    const usage = { inputTokens: 1, outputTokens: 1 };
    if (request.stepIndex > 0) return { decision: { type: 'final', answer: 'done' }, usage };
    return { decision: { type: 'tool_calls', calls: [{ tool: 'remote.call', args: { key: request.input } }] }, usage };
  },
};

const runtime = createRuntime({
  database: config.database,
  planner,
  tools: [remote],
  leaseMs: config.leaseMs,
  claimEveryMs: config.claimEveryMs,
});
await runtime.ready;
process.stdout.write(`${JSON.stringify({ type: 'ready', owner: runtime.owner, pid: process.pid })}\n`);
process.on('SIGTERM', () => {
  void runtime.close().then(() => process.exit(0));
});
setInterval(() => undefined, 60_000);
