/**
 * The child of the kill soak. It opens the runtime on the shared file (which resumes every
 * unfinished run), starts the runs of the seeded set that do not exist yet (the run's index is
 * its idempotency key, so a restart never starts one twice), and answers every approval as the
 * seeded approver: sometimes twice, sometimes 2–3 decisions at once, of which exactly one must
 * win. It exits once every run is terminal, unless the parent kills it first. Each decision and
 * anything the API did wrong is appended to the journal file as one JSON line (`SoakJournalLine`).
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRuntime, type Run } from '../../src/index.js';
import { operatorDecision, pendingApproval } from './operator.js';
import { approverChoice, soakPauses, soakPlanner } from './soak-plan.js';
import { createWorldTools } from './world-tools.js';
import { scopeKey } from '../../src/runtime/tenant-keys.js';
import { storeOf } from '../../src/runtime/internals.js';

/** What the child is given. */
export interface SoakScenario {
  db: string;
  effects: string;
  journal: string;
  seed: number;
  runs: number;
  /** Runs driven at once. */
  concurrency: number;
}

/** One line of the child's journal. */
export type SoakJournalLine =
  | { type: 'decision'; index: number; kind: string; copies: number; concurrent: boolean; decision: string }
  | { type: 'violation'; index: number; text: string };

const scenario = JSON.parse(process.argv[2]!) as SoakScenario;
const { seed } = scenario;
const runtime = createRuntime({
  database: scenario.db,
  planner: soakPlanner(seed),
  tools: createWorldTools(scenario.effects, { pause: soakPauses(seed) }),
});
const journal = (line: SoakJournalLine) => appendFileSync(scenario.journal, JSON.stringify(line) + '\n');
const codeOf = (error: unknown) => String((error as { code?: unknown }).code ?? (error as Error).message);

/** Decides the approval a run waits for, as the seeded approver would. */
async function decide(index: number, run: Run): Promise<void> {
  const approval = await pendingApproval(runtime, run);
  if (!approval) {
    // Decided, and the run is being resumed: wait for it again.
    await sleep(20);
    return;
  }
  const choice = approverChoice(seed, approval.id, approval.kind);
  await sleep(choice.delayMs);
  const action = operatorDecision(approval, scenario.effects);
  const once = () =>
    choice.decision === 'reject'
      ? runtime.reject(run.id, approval.id, { by: 'soak', terminate: choice.terminate })
      : runtime.approve(run.id, approval.id, { by: 'soak', ...(action === 'approved' ? {} : { resolution: action }) });
  const results: PromiseSettledResult<unknown>[] = [];
  if (choice.concurrent) results.push(...(await Promise.allSettled(Array.from({ length: choice.copies }, once))));
  else for (let copy = 0; copy < choice.copies; copy += 1) results.push(...(await Promise.allSettled([once()])));
  const won = results.filter((r) => r.status === 'fulfilled').length;
  const codes = results.flatMap((r) => (r.status === 'rejected' ? [codeOf(r.reason)] : []));
  if (won !== 1 || codes.some((code) => code !== 'approval.already_decided')) {
    const text = `${choice.copies} ${choice.concurrent ? 'concurrent' : 'sequential'} decisions on '${approval.id}': ${won} won, others ${codes.join(', ')}`;
    journal({ type: 'violation', index, text });
  }
  const decision = choice.decision === 'reject' ? (choice.terminate ? 'terminate' : 'reject') : action;
  journal({
    type: 'decision',
    index,
    kind: approval.kind,
    copies: choice.copies,
    concurrent: choice.concurrent,
    decision,
  });
}

/** Starts run `index` (or finds it) and answers its approvals until it is terminal. */
async function drive(index: number): Promise<void> {
  const run = await runtime.start({
    input: `soak run ${index}`,
    sessionId: `soak-${index}`,
    context: { soak_index: index },
    options: { idempotencyKey: `soak-${index}` },
  });
  for (let round = 0; round < 100; round += 1) {
    const settled = await runtime.wait(run.id);
    if (settled.status !== 'waiting_human') return;
    await decide(index, settled);
  }
  journal({ type: 'violation', index, text: `run ${run.id} still waits after 100 decisions` });
}

// Unfinished runs first (they were resumed on open and may wait for a human), then new ones.
const unfinished: number[] = [];
const missing: number[] = [];
for (let index = 0; index < scenario.runs; index += 1) {
  const row = storeOf(runtime).findRunByIdempotencyKey(scopeKey(null, `soak-${index}`));
  if (!row) missing.push(index);
  else if (row.status !== 'succeeded' && row.status !== 'failed') unfinished.push(index);
}
const queue = [...unfinished, ...missing];
await Promise.all(
  Array.from({ length: scenario.concurrency }, async () => {
    for (let index = queue.shift(); index !== undefined; index = queue.shift()) await drive(index);
  }),
);
await runtime.close();
