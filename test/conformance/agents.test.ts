/**
 * Two agents on one database: a run is driven only by runtimes of the agent that started it,
 * whatever process holds the database or claims work, on SQLite and PostgreSQL.
 */
import { describe, expect, it } from 'vitest';
import { createScriptedPlanner, type RuntimeOptions } from '../../src/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable } from '../helpers/dialects.js';
import { openRuntime } from '../helpers/runtime.js';
import { waitUntil } from '../helpers/wait-until.js';
import { createWorld, readEffects } from '../helpers/world.js';

/** The support agent: one high-risk unsafe call (approval), then an answer. */
function support(database: string, effects: string, extra: Partial<RuntimeOptions> = {}): RuntimeOptions {
  return {
    database,
    agent: 'support',
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'refund' } }] }
        : { type: 'final', answer: 'support done' },
    ),
    tools: [createWorld(effects, { risk: 'high' }).unsafe],
    ...extra,
  };
}

/** Another agent with its own tools and planner, which would call them on any run it drove. */
function demo(database: string, effects: string, extra: Partial<RuntimeOptions> = {}): RuntimeOptions {
  return {
    database,
    agent: 'demo',
    planner: createScriptedPlanner((request) =>
      request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'list files' } }] }
        : { type: 'final', answer: 'demo done' },
    ),
    tools: [createWorld(effects).read],
    ...extra,
  };
}

describe.each(ALL_DIALECTS)('agents sharing a database on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  it('records the agent and its tools on the run, and another agent refuses to decide, cancel or drive it', async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    const a = openRuntime(support(database, effects));
    const b = openRuntime(demo(database, effects));
    await Promise.all([a.ready, b.ready]);
    const run = await a.wait((await a.start({ input: 'refund order 7' })).id);
    expect(run).toMatchObject({ status: 'waiting_human', agent: { name: 'support' } });
    expect(run.agent!.toolsFingerprint).toBe(a.agent.toolsFingerprint);
    expect(a.agent.toolsFingerprint).not.toBe(b.agent.toolsFingerprint);
    const mismatch = {
      code: 'run.agent_mismatch',
      failure: { details: { run_agent: 'support', runtime_agent: 'demo' } },
    };
    await expect(b.approve(run.id, run.pendingApprovalId!, { by: 'mallory' })).rejects.toMatchObject(mismatch);
    await expect(b.cancel(run.id)).rejects.toMatchObject(mismatch);
    await expect(b.send(run.id, { type: 'timeout' })).rejects.toMatchObject(mismatch);
    expect((await a.approvals(run.id))[0]).toMatchObject({ status: 'pending' });
    // Its own agent decides it, and only its tools ran.
    await a.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
    expect(await a.wait(run.id)).toMatchObject({ status: 'succeeded', answer: 'support done' });
    expect(readEffects(effects).map((e) => e.tool)).toEqual(['world.unsafe']);
  });

  it("never claims or resumes another agent's runs in flight, reports them, and leaves them to their own agent", async () => {
    const { database, effects } = await freshDatabaseOf(dialect);
    // An API-only runtime of the support agent records runs for workers to claim.
    const api = openRuntime(support(database, effects, { drive: false }));
    const started = await api.start({ input: 'refund order 9' });
    // A worker of the other agent polls the database often: it never takes the run.
    const wrong = openRuntime(demo(database, effects, { claimEveryMs: 20 }));
    await wrong.ready;
    await wrong.recover();
    expect(wrong.recoveryFailures.get(started.id)).toMatchObject({
      code: 'run.agent_mismatch',
      details: { run_agent: 'support', runtime_agent: 'demo' },
    });
    // Several claim rounds later it is still unclaimed and pending, and nothing of demo's ran.
    const rounds = wrong.stats().claimRounds + 5;
    await waitUntil(() => wrong.stats().claimRounds >= rounds, 'five more claim rounds of the other worker');
    expect(await api.get(started.id)).toMatchObject({ status: 'pending' });
    expect(readEffects(effects)).toEqual([]);
    // A worker of its own agent claims it and drives it with the support tools.
    const right = openRuntime(support(database, effects, { claimEveryMs: 20 }));
    await waitUntil(
      async () => (await api.get(started.id)).status === 'waiting_human',
      'the support worker to drive it',
    );
    expect(readEffects(effects)).toEqual([]);
    expect(wrong.stats().liveRuns).toBe(0);
    expect(right.agent.name).toBe('support');
  });
});
