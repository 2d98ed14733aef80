/**
 * The versioned memory (`memoryTools()`): a write is a new version, committed with its call; a
 * session's memory is its runs', a tenant's is shared by its sessions; the planner is shown the
 * memory of the version recorded with its step, and the step's `memory.read` calls read that
 * version (with the step's own writes). A run resumed after a restart, or forked, reads the
 * version it read before although a newer one exists. On a SQLite file and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createScriptedPlanner,
  defineTool,
  memoryTools,
  type PlannerMemory,
  type PlannerRequest,
  type RuntimeOptions,
} from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { openRuntime, restart } from '../helpers/runtime.js';

/** The last tool observation the planner was shown, parsed. */
function observed(request: PlannerRequest, index = -1): unknown {
  const content = request.messages.filter((m) => m.role === 'tool').at(index)?.content;
  return content === undefined ? undefined : (JSON.parse(content) as unknown);
}

/** A deploy that needs approval: a step with it waits before any of its calls run. */
const deploy = defineTool({
  name: 'ops.deploy',
  description: 'Deploys',
  input: z.object({ plan: z.string() }),
  effect: 'idempotent',
  risk: 'high',
  execute: ({ plan }) => ({ deployed: plan }),
});

describe.each(ALL_DIALECTS)('versioned memory (%s)', (dialect) => {
  skipUnlessAvailable(dialect);

  it("writes new versions, reads its own step's writes, and shows the planner its session's and tenant's memory", async () => {
    const { database } = await freshDatabaseOf(dialect);
    const shown: (PlannerMemory | undefined)[] = [];
    const runtime = openRuntime({
      database,
      tools: memoryTools(),
      planner: createScriptedPlanner((request) => {
        shown.push(request.memory);
        if (request.input === 'remember') {
          return request.stepIndex === 0
            ? {
                type: 'tool_calls',
                calls: [
                  { tool: 'memory.write', args: { key: 'customer.name', value: 'Ada' } },
                  { tool: 'memory.write', args: { scope: 'tenant', key: 'policy', value: { refunds: 'manual' } } },
                  { tool: 'memory.read', args: { key: 'customer.name' } },
                ],
              }
            : { type: 'final', answer: JSON.stringify(observed(request)) };
        }
        return { type: 'final', answer: JSON.stringify(request.memory) };
      }),
    });
    const first = await runtime.wait((await runtime.start({ input: 'remember', sessionId: 'ada' })).id);
    expect(first.status).toBe('succeeded');
    // The step's read saw its own earlier write, at the version the step was planned with (empty).
    expect(JSON.parse(first.answer!)).toEqual({ version: 0, key: 'customer.name', value: 'Ada', found: true });
    const steps = await runtime.steps(first.id);
    expect(steps.map((s) => s.memoryVersion)).toEqual([0, 2]);
    expect(steps[1]!.context).toMatchObject({ memory: { version: 2, entries: 2 } });
    expect(shown[1]).toEqual({
      version: 2,
      session: { 'customer.name': 'Ada' },
      tenant: { policy: { refunds: 'manual' } },
    });

    // The same session remembers; another session of the tenant shares only the tenant's memory.
    const again = await runtime.wait((await runtime.start({ input: 'recall', sessionId: 'ada' })).id);
    expect(JSON.parse(again.answer!)).toEqual(shown[1]);
    const other = await runtime.wait((await runtime.start({ input: 'recall', sessionId: 'bob' })).id);
    expect(JSON.parse(other.answer!)).toEqual({ version: 2, session: {}, tenant: { policy: { refunds: 'manual' } } });
    // Another tenant shares nothing.
    const stranger = await runtime.wait(
      (await runtime.start({ input: 'recall', sessionId: 'ada', context: { tenant_id: 'acme' } })).id,
    );
    expect(JSON.parse(stranger.answer!)).toEqual({ version: 2, session: {}, tenant: {} });
  });

  it('reads, after a restart, the version it read before although a newer one exists; so does a fork', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const shown = new Map<string, PlannerMemory | undefined>();
    const options: RuntimeOptions = {
      database,
      tools: [...memoryTools({ scopes: ['tenant'] }), deploy],
      planner: createScriptedPlanner((request) => {
        shown.set(`${request.runId}/${request.stepIndex}`, request.memory);
        const write = /^set (.+)$/.exec(request.input);
        if (write) {
          return request.stepIndex === 0
            ? {
                type: 'tool_calls',
                calls: [{ tool: 'memory.write', args: { scope: 'tenant', key: 'plan', value: write[1] } }],
              }
            : { type: 'final', answer: 'set' };
        }
        // Read the plan and deploy it (approved first): then say what was read, and what the planner sees now.
        return request.stepIndex === 0
          ? {
              type: 'tool_calls',
              calls: [
                { tool: 'memory.read', args: { scope: 'tenant', key: 'plan' } },
                { tool: 'ops.deploy', args: { plan: String(request.memory?.tenant?.plan) } },
              ],
            }
          : {
              type: 'final',
              answer: JSON.stringify({ read: observed(request, 0), now: request.memory?.tenant?.plan }),
            };
      }),
    };
    let runtime = openRuntime(options);
    await runtime.wait((await runtime.start({ input: 'set v1', sessionId: 'ops' })).id);
    const run = await runtime.start({ input: 'deploy the plan', sessionId: 'desk' });
    const waiting = await runtime.wait(run.id);
    expect(waiting.status).toBe('waiting_human');
    expect(shown.get(`${run.id}/0`)).toEqual({ version: 1, tenant: { plan: 'v1' } });

    // A newer version while it waits, then a restart.
    await runtime.wait((await runtime.start({ input: 'set v2', sessionId: 'ops' })).id);
    runtime = await restart(runtime, options);
    await runtime.approve(run.id, waiting.pendingApprovalId!, { by: 'alice' });
    const done = await runtime.wait(run.id);
    // Its read is of version 1 (the step's), its next step plans with the last (2).
    expect(JSON.parse(done.answer!)).toEqual({
      read: { version: 1, key: 'plan', value: 'v1', found: true },
      now: 'v2',
    });
    expect((await runtime.steps(run.id)).map((s) => s.memoryVersion)).toEqual([1, 2]);
    const [read, deployed] = await runtime.toolCalls(run.id);
    expect(read!.status).toBe('succeeded');
    expect(deployed!.args).toEqual({ plan: 'v1' });

    // A fork at step 0 plans it with version 1 again, though version 2 exists.
    const fork = await runtime.fork(run.id, { atStep: 0 });
    expect((await runtime.wait(fork.id)).status).toBe('waiting_human');
    expect(shown.get(`${fork.id}/0`)).toEqual({ version: 1, tenant: { plan: 'v1' } });
    expect((await runtime.steps(fork.id))[0]?.memoryVersion).toBe(1);
  });

  it("gives a fork its source's session memory as it was at the fork, beneath the fork's own", async () => {
    const { database } = await freshDatabaseOf(dialect);
    const shown = new Map<string, PlannerMemory | undefined>();
    const runtime = openRuntime({
      database,
      tools: memoryTools({ scopes: ['session'] }),
      planner: createScriptedPlanner((request) => {
        shown.set(`${request.runId}/${request.stepIndex}`, request.memory);
        if (request.stepIndex === 0) {
          const n = ((request.memory?.session?.n as number | undefined) ?? 0) + 1;
          return { type: 'tool_calls', calls: [{ tool: 'memory.write', args: { key: 'n', value: n } }] };
        }
        if (request.stepIndex === 1) {
          return { type: 'tool_calls', calls: [{ tool: 'memory.read', args: { key: 'n' } }] };
        }
        return { type: 'final', answer: JSON.stringify(observed(request)) };
      }),
    });
    const source = await runtime.wait((await runtime.start({ input: 'count', sessionId: 'src' })).id);
    expect(JSON.parse(source.answer!)).toEqual({ version: 1, key: 'n', value: 1, found: true });
    // The source's session moves on; the fork at step 1 sees it as it was then.
    const later = await runtime.wait((await runtime.start({ input: 'count', sessionId: 'src' })).id);
    expect(JSON.parse(later.answer!)).toEqual({ version: 2, key: 'n', value: 2, found: true });
    const fork = await runtime.fork(source.id, { atStep: 1 });
    const forked = await runtime.wait(fork.id);
    expect(shown.get(`${fork.id}/1`)).toEqual({ version: 1, session: { n: 1 } });
    expect(JSON.parse(forked.answer!)).toEqual({ version: 1, key: 'n', value: 1, found: true });
  });

  it('refuses a scope the agent was not given, and a value too large, telling the model', async () => {
    const { database } = await freshDatabaseOf(dialect);
    const runtime = openRuntime({
      database,
      tools: memoryTools({ scopes: ['session'], maxValueBytes: 10 }),
      planner: createScriptedPlanner([
        {
          type: 'tool_calls',
          calls: [
            { tool: 'memory.write', args: { scope: 'tenant', key: 'a', value: 1 } },
            { tool: 'memory.write', args: { key: 'b', value: 'x'.repeat(20) } },
            { tool: 'memory.write', args: { key: 'c', value: null } },
            { tool: 'memory.read', args: {} },
          ],
        },
        (request) => ({ type: 'final', answer: JSON.stringify(request.memory) }),
      ]),
    });
    const done = await runtime.wait((await runtime.start({ input: 'try' })).id);
    const calls = await runtime.toolCalls(done.id);
    expect(calls.map((c) => c.status)).toEqual(['failed', 'failed', 'succeeded', 'succeeded']);
    expect(JSON.stringify(calls[0]!.result)).toMatch(/Memory scope 'tenant' is not open to this agent: use session/);
    expect(JSON.stringify(calls[1]!.result)).toMatch(/22 bytes as JSON, more than 10/);
    expect(calls[3]!.result).toMatchObject({ content: { version: 0, entries: {} } });
    // Forgetting an entry is a version too: the next step reads version 1, with nothing in it.
    expect(JSON.parse(done.answer!)).toEqual({ version: 1, session: {} });
  });
});
