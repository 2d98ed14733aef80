/**
 * The child of the kill soaks. It opens the runtime on the shared database (which resumes
 * unfinished runs, and on PostgreSQL goes on claiming runs no live worker holds), starts the runs
 * of its share of the seeded set (the run's index is its idempotency key, so a restart never
 * starts one twice), and answers their approvals as the seeded approver: sometimes twice,
 * sometimes 2–3 decisions at once, of which exactly one must win. It exits once every run of its
 * share is terminal, unless the parent kills it first. Each decision and anything the API did
 * wrong is appended to the journal file as one JSON line (`SoakJournalLine`).
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRuntime, type Run } from '../../src/index.js';
import { operatorDecision, pendingApproval } from './operator.js';
import { approverChoice, soakPauses, soakPlanner } from './soak-plan.js';
import { createWorldTools } from './world-tools.js';

/** What the child is given. */
export interface SoakScenario {
  db: string;
  effects: string;
  journal: string;
  seed: number;
  runs: number;
  /** Runs driven at once. */
  concurrency: number;
  /** This child's share of the runs: those whose index is `index` modulo `of` (default: all). */
  partition?: { index: number; of: number };
  leaseMs?: number;
  claimEveryMs?: number;
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
  ...(scenario.leaseMs ? { leaseMs: scenario.leaseMs } : {}),
  ...(scenario.claimEveryMs ? { claimEveryMs: scenario.claimEveryMs } : {}),
});
const journal = (line: SoakJournalLine) => appendFileSync(scenario.journal, JSON.stringify(line) + '\n');
const codeOf = (error: unknown) => String((error as { code?: unknown }).code ?? (error as Error).message);

/**
 * Decides the approval a run waits for, as the seeded approver would: `decided`, or `again` when
 * there is nothing to decide yet (the approval is decided and the run resuming, or another
 * worker still holds the run until its lease lapses), after a short pause before looking again.
 */
async function decide(index: number, run: Run): Promise<'decided' | 'again'> {
  const approval = await pendingApproval(runtime, run);
  if (!approval) {
    await sleep(20);
    return 'again';
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
  // Another worker still holds the run (one that was killed, until its lease lapses): later.
  if (won === 0 && codes.length > 0 && codes.every((code) => code === 'run.version_conflict')) {
    await sleep(100);
    return 'again';
  }
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
  return 'decided';
}

/** Starts run `index` (or finds it) and answers its approvals until it is terminal. */
async function drive(index: number): Promise<void> {
  const run = await runtime.start({
    input: `soak run ${index}`,
    sessionId: `soak-${index}`,
    context: { soak_index: index },
    options: { idempotencyKey: `soak-${index}` },
  });
  // Decisions are counted; looking again until there is one to take is not (the parent's time
  // limit bounds that).
  for (let decisions = 0; decisions < 100;) {
    const settled = await runtime.wait(run.id);
    if (settled.status !== 'waiting_human') return;
    if ((await decide(index, settled)) === 'decided') decisions += 1;
  }
  journal({ type: 'violation', index, text: `run ${run.id} still waits after 100 decisions` });
}

// Unfinished runs first (they were resumed on open and may wait for a human), then new ones;
// a run's idempotency key finds it.
const { index: share, of } = scenario.partition ?? { index: 0, of: 1 };
const unfinished: number[] = [];
const missing: number[] = [];
const known = new Map<string, string>();
for (let cursor: string | null = null, first = true; first || cursor; first = false) {
  const page: { runs: Run[]; nextCursor: string | null } = await runtime.list({
    limit: 200,
    ...(cursor ? { cursor } : {}),
  });
  for (const run of page.runs) if (run.idempotencyKey) known.set(run.idempotencyKey, run.status);
  cursor = page.nextCursor;
}
for (let index = share; index < scenario.runs; index += of) {
  const status = known.get(`soak-${index}`);
  if (status === undefined) missing.push(index);
  else if (status !== 'succeeded' && status !== 'failed') unfinished.push(index);
}
const queue = [...unfinished, ...missing];
await Promise.all(
  Array.from({ length: scenario.concurrency }, async () => {
    for (let index = queue.shift(); index !== undefined; index = queue.shift()) await drive(index);
  }),
);
await runtime.close();
