/**
 * A process that drives a run of the expiring-approval variant until it waits for a human,
 * prints {"run_id", "at"} (the instant its durable delay stored), and stays until killed.
 *   argv[2] = JSON { db, effects, delay_ms }
 */
import { createRuntime, createScriptedPlanner } from '../../src/index.js';
import { storeOf } from '../../src/runtime/internals.js';
import { expiringApproval } from '../fixtures/expiring-approval.js';
import { createWorld } from './world.js';

const { db, effects, delay_ms } = JSON.parse(process.argv[2]!) as { db: string; effects: string; delay_ms: number };
const runtime = createRuntime({
  database: db,
  machine: expiringApproval(delay_ms),
  planner: createScriptedPlanner([{ type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: 'send' } }] }]),
  tools: [createWorld(effects, { risk: 'high' }).unsafe],
});
const run = await runtime.wait((await runtime.start({ input: 'x' })).id);
const snapshot = JSON.parse((await storeOf(runtime).getRun(run.id))!.snapshot) as {
  context: { timers: { approval: number } };
};
console.log(JSON.stringify({ run_id: run.id, status: run.status, at: snapshot.context.timers.approval }));
// Stay until the parent SIGKILLs this process.
setInterval(() => undefined, 1_000);
