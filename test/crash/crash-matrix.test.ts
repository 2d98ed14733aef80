/**
 * The crash-point matrix: every failpoint (and the point inside a tool right after its effect)
 * × every effect class × a thrown error or a SIGKILL, each in a real child process. The run is
 * then resumed from the database in this process, drained by an operator who checks the outside
 * world, and held to the invariants of `helpers/invariants.ts` plus the outcome each cell
 * determines. On PostgreSQL (the SIGKILL column) the child is one worker and this process
 * another, which takes the run over from the dead one.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, it } from 'vitest';
import { createRuntime, EFFECTS, type Effect } from '../../src/index.js';
import { FAILPOINTS } from '../../src/runtime/model/failpoints.js';
import { crashPlanner } from '../helpers/crash-scenario.js';
import { DIALECTS, freshDatabaseOf, type DialectName } from '../helpers/dialects.js';
import { integrityProblems, runProblems } from '../helpers/invariants.js';
import type { MatrixChildReport, MatrixScenario } from '../helpers/matrix-child.js';
import { drainRun, type OperatorAction } from '../helpers/operator.js';
import { spawnChild } from '../helpers/spawn-child.js';
import { createWorldTools, worldToolName } from '../helpers/world-tools.js';
import { readEffects } from '../helpers/world.js';
import { scaled } from '../helpers/limits.js';

// `planner.journaled` fires only for planners that are not cheap (a real model); the scripted
// planner here commits its answers with their transitions. The OpenAI planner's crash test covers it.
// A fork's creation has its own crash test (test/crash/fork-kill.test.ts): this matrix starts runs.
// So do the points of a child run an agent tool starts (test/crash/child-kill.test.ts), of a handoff (handoff-kill)
// and of a call that saved a handle (test/mcp/mcp-tasks.test.ts).
const ELSEWHERE = [
  'planner.journaled',
  'fork.copying',
  'child.starting',
  'child.created',
  'child.ended',
  'handoff.settled',
  'tool.handle_saved',
  'task.polled',
  'task.ended',
] as const;
type Point = Exclude<(typeof FAILPOINTS)[number], (typeof ELSEWHERE)[number]> | 'tool.effect';
const POINTS: readonly Point[] = [
  ...FAILPOINTS.filter(
    (p): p is Exclude<typeof p, (typeof ELSEWHERE)[number]> => !(ELSEWHERE as readonly string[]).includes(p),
  ),
  'tool.effect',
];
const MODES = ['throw', 'kill'] as const;
type Mode = (typeof MODES)[number];

const CHILD = fileURLToPath(new URL('../helpers/matrix-child.ts', import.meta.url));
/**
 * On PostgreSQL: the child worker's lease (short, so a run is never held long by a dead child;
 * a dead child on this host is seen at once anyway). Scaled: a child whose event loop is starved
 * for longer than its lease loses its own run, and so never reaches the failpoint.
 */
const PG_LEASE_MS = scaled(800);
/** Children at once: this machine has two cores. */
const POOL = 3;

/** What a cell must end with, once the operator has drained it. */
interface Expectation {
  status: 'succeeded' | 'failed';
  /** Effect lines of the one call in the effects file. */
  effects: number;
  /** The call's ledger status (null: never recorded). */
  ledger: string | null;
  /** What the operator had to do after the reopen. */
  actions: OperatorAction[];
}

const MID_CALL: ReadonlySet<Point> = new Set(['tool.started', 'tool.effect', 'tool.returned']);

/** The deterministic outcome of a cell. */
function expectation(point: Point, effect: Effect, mode: Mode): Expectation {
  const ran: Expectation = { status: 'succeeded', effects: 1, ledger: 'succeeded', actions: [] };
  const failed = (ledger: string | null): Expectation => ({ status: 'failed', effects: 0, ledger, actions: [] });
  // With tools and a planner that answer without a macrotask, everything after `run.created` is
  // one group commit, the one that makes the run terminal: losing it loses the call's result too.
  if (point === 'run.terminal') {
    if (effect === 'read') return { ...ran, effects: 2 };
    if (effect === 'unsafe') return { ...ran, actions: ['done'] };
    return ran;
  }
  if (mode === 'kill') {
    // Killed before the approval was requested: the reopened run asks again.
    if (point === 'approval.requesting') return { ...ran, actions: ['approved'] };
    if (!MID_CALL.has(point)) return ran;
    const happened = point !== 'tool.started';
    // A read runs again; idempotent and reconcilable calls find their effect; an unsafe one asks a human.
    if (effect === 'read') return { ...ran, effects: happened ? 2 : 1 };
    if (effect === 'unsafe') return { ...ran, actions: [happened ? 'done' : 'retry'] };
    return ran;
  }
  switch (point) {
    // After the commit that made them durable: the caller (start, approve, wait) fails, the run goes on after a reopen.
    case 'run.created':
    case 'commit.publishing':
    case 'approval.committed':
      return ran;
    // Inside an actor: the run fails with an internal error.
    case 'planner.answered':
    case 'step.validating':
    case 'approval.requesting':
      return failed(null);
    // The run failed while the call was under way (its `started` row durable, the tool not yet
    // called): the last write settles the call, `unknown` unless it only reads.
    case 'tool.started':
      return failed(effect === 'read' ? 'failed' : 'unknown');
    // The effect happened and the run failed after it: the ledger still keeps the call's outcome.
    case 'tool.returned':
      return { status: 'failed', effects: 1, ledger: 'succeeded', actions: [] };
    // The tool threw after its effect, not a ToolFailedError: its outcome is unknown (docs/architecture.md §4).
    // A read reports the failure to the model; an idempotent call runs again with the same key
    // and has no second effect; a reconcilable one is found done; an unsafe one waits for a
    // human, who sees the effect happened and records it done.
    case 'tool.effect':
      if (effect === 'read') return { ...ran, ledger: 'failed' };
      if (effect === 'unsafe') return { ...ran, actions: ['done'] };
      return ran;
  }
}

/**
 * The outcomes a cell may end with on a dialect. On SQLite everything after `run.created` is one
 * group commit (see `expectation`); on PostgreSQL each flush of a run commits by itself, so a
 * kill at `run.terminal` may find the call's result durable already: then it ran once, with
 * nothing for the operator to do.
 */
function expectations(point: Point, effect: Effect, mode: Mode, dialect: DialectName): Expectation[] {
  const expected = expectation(point, effect, mode);
  if (dialect === 'postgres' && point === 'run.terminal') {
    return [expected, { status: 'succeeded', effects: 1, ledger: 'succeeded', actions: [] }];
  }
  return [expected];
}

/** What the child itself must have seen when a thrown failpoint left it standing. */
function childExpectation(point: Point, expected: Expectation): Partial<MatrixChildReport> {
  const fired = `Failpoint '${point}' fired`;
  if (point === 'run.created' || point === 'commit.publishing') return { startError: fired };
  if (point === 'approval.committed') return { approveError: fired };
  // The terminal commit was rolled back; the child's runtime picked the run up again from the
  // file, so what its wait() saw depends on the effect class: the reopened runtime decides.
  if (point === 'run.terminal') return {};
  // A call left for a human to decide: the child's run waits.
  if (expected.actions.length > 0) return { status: 'waiting_human' };
  return { status: expected.status };
}

function semaphore(size: number) {
  let free = size;
  const queue: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (free === 0) await new Promise<void>((resolve) => queue.push(resolve));
    else free -= 1;
    try {
      return await task();
    } finally {
      const next = queue.shift();
      if (next) next();
      else free += 1;
    }
  };
}

const pool = semaphore(POOL);
const tally = { cells: 0, fired: 0, passed: 0, notes: [] as string[] };

/** Runs one cell: the child, the reopen, the operator, the checks. Returns the problems found. */
async function runCell(point: Point, effect: Effect, mode: Mode, dialect: DialectName): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-matrix-'));
  const cell = `${point} × ${effect} × ${mode}${dialect === 'postgres' ? ' (PostgreSQL)' : ''}`;
  try {
    const risk = point.startsWith('approval.') ? 'high' : 'low';
    const tool = worldToolName(effect, risk);
    const scenario: MatrixScenario = {
      db: dialect === 'sqlite' ? join(dir, 'baton.db') : (await freshDatabaseOf('postgres')).database,
      effects: join(dir, 'effects.jsonl'),
      tool,
      ...(point === 'tool.effect' ? { after: mode } : {}),
      ...(dialect === 'postgres' ? { leaseMs: PG_LEASE_MS } : {}),
    };
    const log = join(dir, 'failpoints.log');
    const child = await pool(() =>
      spawnChild(CHILD, [JSON.stringify(scenario)], {
        env: { BATON_FAILPOINTS: point === 'tool.effect' ? '' : `${point}=${mode}`, BATON_FAILPOINTS_LOG: log },
        timeoutMs: scaled(60_000),
      }),
    );
    const problems: string[] = [];
    const fired = readText(log).split('\n').includes(`${point}=${mode}@1`);
    if (fired) tally.fired += 1;
    else {
      const report = child.stdout.trim() || child.stderr.trim().slice(0, 2000) || 'nothing';
      problems.push(`the failpoint did not fire (log: ${JSON.stringify(readText(log))}); the child said ${report}`);
    }
    const allowed = expectations(point, effect, mode, dialect);
    const expected = allowed[0]!;
    if (mode === 'kill') {
      if (child.signal !== 'SIGKILL') problems.push(`the child ended with ${child.signal ?? child.code}, not SIGKILL`);
    } else {
      const report = parseReport(child.stdout);
      if (child.code !== 0 || !report)
        problems.push(`the child ended with ${child.signal ?? child.code}: ${child.stderr}`);
      for (const [key, value] of Object.entries(childExpectation(point, expected))) {
        const seen = report?.[key as keyof MatrixChildReport];
        if (typeof value === 'string' && !String(seen).includes(value)) {
          problems.push(`the child saw ${key} ${JSON.stringify(seen)}, expected ${JSON.stringify(value)}`);
        }
      }
      if (report?.waitTimedOut) problems.push(`the child's wait() never settled`);
    }

    // Another worker takes the run over: at once, the dead process being on this host (on another
    // host it would wait for the child's short lease to lapse).
    const runtime = createRuntime({
      database: scenario.db,
      planner: crashPlanner(tool),
      tools: createWorldTools(scenario.effects),
    });
    try {
      const runs = (await runtime.list()).runs;
      if (runs.length !== 1) return [...problems, `${runs.length} runs in the file`];
      const runId = runs[0]!.id;
      const { run, actions } = await drainRun(runtime, runId, scenario.effects);
      const key = `${runId}.s0.c0`;
      const effects = readEffects(scenario.effects);
      const row = (await runtime.toolCalls(runId)).find((call) => call.id === key);
      const seen = {
        status: run.status,
        effects: effects.filter((e) => e.key === key).length,
        ledger: row?.status ?? null,
        actions,
      };
      const wants = allowed.map((want) =>
        JSON.stringify({ status: want.status, effects: want.effects, ledger: want.ledger, actions: want.actions }),
      );
      if (!wants.includes(JSON.stringify(seen))) {
        problems.push(`ended ${JSON.stringify(seen)}, expected ${wants.join(' or ')}`);
      }
      if (run.status === 'failed' && (run.stopReason !== 'error' || run.failure?.code !== 'internal.error')) {
        problems.push(`failed with ${run.stopReason}/${run.failure?.code}, expected error/internal.error`);
      }
      problems.push(...(await runProblems(runtime, runId, effects)));
      if (dialect === 'sqlite') problems.push(...integrityProblems(runtime));
    } finally {
      await runtime.close();
    }
    return problems.map((p) => `${cell}: ${p}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function parseReport(stdout: string): MatrixChildReport | undefined {
  const line = stdout.trim().split('\n').at(-1);
  try {
    return line ? (JSON.parse(line) as MatrixChildReport) : undefined;
  } catch {
    return undefined;
  }
}

describe.concurrent('crash matrix (every failpoint × effect class × throw or SIGKILL)', () => {
  afterAll(() => {
    console.log(`crash matrix: ${tally.cells} cells, ${tally.fired} fired, ${tally.passed} passed, 0 skipped`);
    for (const line of [...tally.notes].sort()) console.log(`  ${line}`);
  });

  for (const dialect of DIALECTS) {
    // On PostgreSQL the SIGKILL column: a worker dies, another takes over.
    const modes = dialect === 'sqlite' ? MODES : (['kill'] as const);
    for (const point of POINTS) {
      for (const effect of EFFECTS) {
        for (const mode of modes) {
          const on = dialect === 'sqlite' ? '' : ' on PostgreSQL';
          it(`keeps every invariant: ${mode} at ${point}, ${effect} tool${on}`, async ({ expect }) => {
            tally.cells += 1;
            const problems = await runCell(point, effect, mode, dialect);
            expect(problems).toEqual([]);
            tally.passed += 1;
          });
        }
      }
    }
  }
});
