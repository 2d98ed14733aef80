/**
 * A worker process for the multi-worker tests: a runtime on a shared database that claims runs
 * and drives them with a scripted planner (`steps` tool steps, then an answer) over the world
 * tools (each call pauses `pauseMs` before its effect, so runs stay in flight a while). It prints
 * `{"type":"ready","owner":…,"pid":…}` once up, then lives until killed (or SIGTERM: closes).
 * With `stallMs`, the first call of `world.idempotent` blocks the whole process that long first:
 * a worker that stops renewing its leases while it is still alive (a GC pause, a frozen VM).
 */
import { createRuntime } from '../../src/index.js';
import { workerPlanner } from './worker-plan.js';
import { createWorldTools } from './world-tools.js';

/** What the child is given (one JSON argument). */
export interface WorkerChildConfig {
  database: string;
  effects: string;
  steps: number;
  pauseMs: number;
  leaseMs: number;
  claimEveryMs: number;
  /** Most runs this worker drives at once. */
  maxRuns?: number;
  stallMs?: number;
}

const config = JSON.parse(process.argv[2]!) as WorkerChildConfig;
let stalled = false;
const tools = createWorldTools(config.effects, {
  pause: (key) => {
    if (config.stallMs && !stalled && key.endsWith('.c1')) {
      stalled = true;
      const until = Date.now() + config.stallMs;
      process.stdout.write(`${JSON.stringify({ type: 'stall', key, until })}\n`);
      while (Date.now() < until) {
        // Busy: no timer, no heartbeat, no I/O runs in this process meanwhile.
      }
      process.stdout.write(`${JSON.stringify({ type: 'stalled', key })}\n`);
    }
    return { before: config.pauseMs, after: 0 };
  },
});
const runtime = createRuntime({
  database: config.database,
  planner: workerPlanner(config.steps),
  tools,
  leaseMs: config.leaseMs,
  claimEveryMs: config.claimEveryMs,
  ...(config.maxRuns ? { maxRuns: config.maxRuns } : {}),
});
await runtime.ready;
runtime.watch((event) => {
  if (event.type === 'state' && (event.data.to === 'succeeded' || event.data.to === 'failed')) {
    process.stdout.write(`${JSON.stringify({ type: 'ended', run_id: event.runId, to: event.data.to })}\n`);
  }
});
process.stdout.write(`${JSON.stringify({ type: 'ready', owner: runtime.owner, pid: process.pid })}\n`);
if (config.stallMs) {
  // After a stall, whether this worker still drives anything.
  setInterval(() => {
    if (stalled) process.stdout.write(`${JSON.stringify({ type: 'stats', live: runtime.stats().liveRuns })}\n`);
  }, 100).unref();
}
process.on('SIGTERM', () => {
  void runtime.close().then(() => process.exit(0));
});
setInterval(() => undefined, 60_000);
