/**
 * A worker process of the bench's PostgreSQL section: the bench's runtime (5 steps of one
 * `unsafe` call, then an answer) claiming runs on the database it is given. Prints one JSON
 * line once up; SIGTERM closes it.
 */
import { createBenchRuntime } from './bench-runtime.js';
import { LOOP_STEPS } from './scenarios.js';

const database = process.argv[2]!;
const runtime = createBenchRuntime({
  database,
  effect: 'unsafe',
  steps: LOOP_STEPS,
  extra: { claimEveryMs: 100 },
});
await runtime.ready;
process.stdout.write(`${JSON.stringify({ type: 'ready', pid: process.pid })}\n`);
process.on('SIGTERM', () => {
  void runtime.close().then(() => process.exit(0));
});
setInterval(() => undefined, 60_000);
