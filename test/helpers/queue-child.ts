/**
 * A process of the session-queue crash test. `start`: drives run A of session `s` until it waits
 * for approval, then starts run B in the same session with `onBusy: 'interrupt'` (the test's
 * failpoint kills it once B is committed, before it cancels A itself). `resume`: opens the same
 * database and prints how A and B ended.
 *   argv[2] = JSON { db, effects, phase }
 */
import { createRuntime, createScriptedPlanner } from '../../src/index.js';
import { createWorld } from './world.js';

const { db, effects, phase } = JSON.parse(process.argv[2]!) as { db: string; effects: string; phase: string };
const runtime = createRuntime({
  database: db,
  planner: createScriptedPlanner((request) =>
    request.stepIndex === 0 && request.input.startsWith('hold')
      ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: request.input } }] }
      : { type: 'final', answer: `done: ${request.input}` },
  ),
  tools: [createWorld(effects, { risk: 'high' }).unsafe],
});
if (phase === 'start') {
  const a = await runtime.wait((await runtime.start({ input: 'hold a', sessionId: 's' })).id);
  if (a.status !== 'waiting_human') throw new Error(`run A is ${a.status}`);
  await runtime.start({ input: 'b', sessionId: 's', onBusy: 'interrupt' });
  throw new Error('the failpoint did not kill this process');
}
const runs = (await runtime.list({ sessionId: 's' })).runs;
const a = runs.find((run) => run.input === 'hold a')!;
const b = runs.find((run) => run.input === 'b')!;
const [endA, endB] = await Promise.all([runtime.wait(a.id), runtime.wait(b.id)]);
await runtime.close();
console.log(
  JSON.stringify({
    a: { status: endA.status, stop_reason: endA.stopReason },
    b: { status: endB.status, answer: endB.answer },
  }),
);
