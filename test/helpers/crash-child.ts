/**
 * A child process that drives one run until something kills it. The parent passes a JSON
 * scenario as argv[2] and arms failpoints through BATON_FAILPOINTS; effects go to a file
 * outside Baton's database so the parent can count them after the SIGKILL.
 */
import { createRuntime } from '../../src/index.js';
import { crashPlanner, type CrashScenario } from './crash-scenario.js';
import { createWorld } from './world.js';

const scenario = JSON.parse(process.argv[2]!) as CrashScenario;
const world = createWorld(scenario.effects, {
  killAfterEffect: scenario.killAfterEffect ?? false,
  risk: scenario.risk ?? 'low',
});
const runtime = createRuntime({ database: scenario.db, planner: crashPlanner(scenario.tool), tools: world.all() });
const run = await runtime.start({ input: 'crash test', sessionId: 'crash' });
const settled = await runtime.wait(run.id);
if (scenario.approveThenDie && settled.status === 'waiting_human') {
  await runtime.approve(run.id, settled.pendingApprovalId!, { by: 'child' });
  await runtime.wait(run.id);
}
if (scenario.dieWhenSettled) process.kill(process.pid, 'SIGKILL');
await runtime.close();
