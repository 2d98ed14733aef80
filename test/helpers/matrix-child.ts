/**
 * The child of the crash matrix: drives one run of `crashPlanner(tool)` with the failpoints the
 * parent armed (BATON_FAILPOINTS), approving when the run waits for a normal approval. When a
 * thrown failpoint leaves it standing, it prints what it saw as one JSON line (`MatrixChildReport`).
 */
import { createRuntime, type Run } from '../../src/index.js';
import { crashPlanner } from './crash-scenario.js';
import { createWorldTools } from './world-tools.js';
import { scaled } from './limits.js';

/** What the child is asked to do. */
export interface MatrixScenario {
  db: string;
  effects: string;
  tool: string;
  /** The crash point inside the tool, right after its effect. */
  after?: 'kill' | 'throw';
  /** The lease of the child's runtime (PostgreSQL: how long until another worker takes over). */
  leaseMs?: number;
}

/** What a child that was not killed saw. */
export interface MatrixChildReport {
  runId?: string;
  /** The last status `wait` returned. */
  status?: string;
  startError?: string;
  approveError?: string;
  /** `wait` had not settled after `WAIT_MS`, or rejected (`waitError`). */
  waitTimedOut?: boolean;
  waitError?: string;
}

const WAIT_MS = scaled(2_500);
const scenario = JSON.parse(process.argv[2]!) as MatrixScenario;
const runtime = createRuntime({
  database: scenario.db,
  planner: crashPlanner(scenario.tool),
  tools: createWorldTools(scenario.effects, { after: scenario.after }),
  ...(scenario.leaseMs ? { leaseMs: scenario.leaseMs } : {}),
});
const report: MatrixChildReport = {};
const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

const settle = (runId: string) =>
  Promise.race([
    runtime.wait(runId).catch((error: unknown) => {
      report.waitError = message(error);
      return null;
    }),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), WAIT_MS)),
  ]);

try {
  const run = await runtime.start({ input: 'crash matrix', sessionId: 'matrix' });
  report.runId = run.id;
  for (let round = 0; round < 5; round += 1) {
    const settled: Run | null = await settle(run.id);
    if (!settled) {
      report.waitTimedOut = true;
      break;
    }
    report.status = settled.status;
    if (settled.status !== 'waiting_human' || settled.waitReason !== 'approval') break;
    try {
      await runtime.approve(run.id, settled.pendingApprovalId!, { by: 'child' });
    } catch (error) {
      report.approveError = message(error);
      break;
    }
  }
} catch (error) {
  report.startError = message(error);
}
process.stdout.write(JSON.stringify(report) + '\n');
await runtime.close();
