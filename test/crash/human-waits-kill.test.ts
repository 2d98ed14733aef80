/**
 * Every kind of human wait across SIGKILL, with real child processes on one database: a run is
 * started in a child and killed once it durably waits for a person; the wait is decided from
 * another process (a child killed right after the decision committed, then a third process
 * resumes; or this process, which decides and drives the run on). Each effect happens exactly
 * once, outside the database, with the arguments a person edited; a person's response runs
 * nothing; expiries fire at their stored instant in a process opened after it; of two processes
 * answering one question at once, one answer applies. On SQLite, and on PostgreSQL when a
 * cluster is given (each process a worker).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Runtime } from '../../src/index.js';
import { openStore } from '../../src/store/open-store.js';
import type { ApprovalRow, RunRow, Store } from '../../src/store/index.js';
import { ALL_DIALECTS, freshDatabaseOf, skipUnlessAvailable, type DialectName } from '../helpers/dialects.js';
import {
  AFTER_MORE_TIME,
  CHOICES,
  decisionOf,
  EDITED,
  expectedEffects,
  expectedEnd,
  HUMAN_KINDS,
  humanSetup,
  PROPOSED,
  RESPONSE,
  spawnHumanChild,
  WAIT_REASON,
  type HumanChild,
  type HumanChildConfig,
  type HumanKind,
  type StartOptions,
} from '../helpers/human-waits.js';
import { integrityProblems, runProblems } from '../helpers/invariants.js';
import { scaled } from '../helpers/limits.js';
import { eventsOf, openRuntime } from '../helpers/runtime.js';
import { tempDir } from '../helpers/temp.js';
import { waitUntil } from '../helpers/wait-until.js';
import { readEffects, type EffectLine } from '../helpers/world.js';

/** How long an expiring wait lasts: long enough that its process is killed before the instant. */
const EXPIRES_IN = scaled(4_000);
/** What a person's decision is recorded as, by kind. */
const DECIDED: Record<HumanKind, { status: string; resolution: string | null }> = {
  ask: { status: 'approved', resolution: 'answer' },
  edit: { status: 'approved', resolution: 'edit' },
  respond: { status: 'approved', resolution: 'respond' },
  extend: { status: 'approved', resolution: 'extend' },
  end: { status: 'rejected', resolution: 'end' },
  timeout: { status: 'approved', resolution: 'extend' },
  more_time: { status: 'approved', resolution: 'extend' },
  policy: { status: 'approved', resolution: null },
  approve: { status: 'approved', resolution: null },
};

/** One test's database, effects file and a store of its own to read the rows with. */
interface Bench {
  dialect: DialectName;
  database: string;
  effects: string;
  dir: string;
  rows: Store;
  children: HumanChild[];
}

async function bench(dialect: DialectName): Promise<Bench> {
  const { database, effects } = await freshDatabaseOf(dialect);
  return { dialect, database, effects, dir: tempDir(), rows: openStore(database).store, children: [] };
}

/** Kills what is left of the bench's children and closes its store. */
async function cleanUp(b: Bench): Promise<void> {
  await Promise.all(b.children.map((child) => child.kill()));
  await b.rows.close();
}

function child(b: Bench, config: Omit<HumanChildConfig, 'database' | 'effects'>, spec?: string): HumanChild {
  const log = join(b.dir, 'failpoints.log');
  const spawned = spawnHumanChild({ ...config, database: b.database, effects: b.effects }, { spec, log });
  b.children.push(spawned);
  return spawned;
}

/** Waits until `line(type)` is printed; fails with the child's stderr if it ended first. */
async function lineOf(c: HumanChild, type: string): Promise<Record<string, unknown>> {
  let gone = false;
  void c.exited.then(() => (gone = true));
  await waitUntil(() => {
    if (c.line(type)) return true;
    if (gone) throw new Error(`the child ended before printing '${type}': ${JSON.stringify(c.lines())} ${c.stderr()}`);
    return false;
  }, `the child's '${type}' line`);
  return c.line(type)!;
}

/** How a child ended, bounded: one that outlives the limit is killed and the test fails. */
async function exitOf(c: HumanChild): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void c.kill();
      reject(new Error(`the child did not end: ${JSON.stringify(c.lines())} ${c.stderr()}`));
    }, scaled(90_000));
  });
  try {
    return await Promise.race([c.exited, limit]);
  } finally {
    clearTimeout(timer);
  }
}

async function rowsOfRun(b: Bench, runId: string): Promise<{ run: RunRow; wait: ApprovalRow | undefined }> {
  const run = (await b.rows.getRun(runId))!;
  const wait = (await b.rows.listApprovals(runId)).find((a) => a.id === run.pending_approval_id);
  return { run, wait };
}

/**
 * Starts a run of `kind` in a child and waits, reading the database, until it durably waits for
 * a person with the kind's reason; then SIGKILLs the child (unless `keep`). Returns the wait.
 */
async function startToWait(b: Bench, kind: HumanKind, options: StartOptions = {}, keep = false) {
  const starter = child(b, { phase: 'start', kind, options });
  const runId = (await lineOf(starter, 'started')).run_id as string;
  await waitUntil(async () => {
    const { run, wait } = await rowsOfRun(b, runId);
    return run.status === 'waiting_human' && wait?.status === 'pending';
  }, `run ${runId} to wait for a person`);
  if (!keep) expect((await starter.kill()).signal).toBe('SIGKILL');
  const { run, wait } = await rowsOfRun(b, runId);
  // The kill changed nothing: the wait is still pending, with the kind's reason.
  expect(run).toMatchObject({ status: 'waiting_human', wait_reason: WAIT_REASON[kind] });
  expect(wait).toMatchObject({ status: 'pending', kind: kind === 'ask' ? 'input' : waitKind(kind) });
  return { runId, wait: wait!, starter };
}

function waitKind(kind: HumanKind): string {
  if (kind === 'extend' || kind === 'end' || kind === 'timeout' || kind === 'more_time') return 'budget';
  return kind === 'policy' ? 'policy' : 'tool';
}

function runtimeOf(b: Bench, kind: HumanKind): Runtime {
  return openRuntime(humanSetup(kind, b.database, b.effects));
}

/** The run's effects (the lines of its calls), in the order they happened. */
function effectsOf(b: Bench, runId: string): EffectLine[] {
  return readEffects(b.effects).filter((e) => e.key.startsWith(`${runId}.`));
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The invariants of `helpers/invariants.ts`, but for a call a person responded to: the ledger
 * has it `succeeded` (the person's result) and it never took effect, which is what a response
 * means (checked on its own in `checkKind`).
 */
async function problemsOf(b: Bench, runtime: Runtime, runId: string, kind: HumanKind): Promise<string[]> {
  const problems = await runProblems(runtime, runId, readEffects(b.effects));
  const responded = `run ${runId}: call ${runId}.s0.c0 is 'succeeded' in the ledger but did not take effect`;
  const kept = kind === 'respond' ? problems.filter((p) => p !== responded) : problems;
  return b.dialect === 'sqlite' ? [...kept, ...integrityProblems(runtime)] : kept;
}

/** What the ended run of `kind` must show: its end, its effects, the decision, the call's record. */
async function checkKind(b: Bench, runtime: Runtime, runId: string, kind: HumanKind, waitId: string) {
  const run = await runtime.get(runId);
  expect(run).toMatchObject(expectedEnd(kind));
  // Each effect exactly once, with the values the decision called for.
  expect(effectsOf(b, runId).map((e) => e.value)).toEqual(expectedEffects(kind));
  const wait = (await runtime.approvals(runId)).find((a) => a.id === waitId)!;
  expect(wait).toMatchObject({ ...DECIDED[kind], decidedBy: 'alice' });
  // Decided once: one result event for the wait.
  const events = await eventsOf(runtime, runId);
  const results = events.filter(
    (e) =>
      (e.type === 'approval_result' || e.type === 'input_result') &&
      [e.data.approval_id, e.data.input_id].includes(waitId),
  );
  expect(results).toHaveLength(1);
  const calls = await runtime.toolCalls(runId);
  switch (kind) {
    case 'ask':
      expect(wait.answer).toEqual({ answer: CHOICES[1] });
      expect(calls[0]).toMatchObject({ tool: 'human.ask', status: 'succeeded', result: { given: 'answer' } });
      break;
    case 'edit':
      expect(calls[0]).toMatchObject({
        args: { value: EDITED },
        status: 'succeeded',
        edited: { proposedArgs: { value: PROPOSED }, by: 'alice', reason: 'narrower' },
      });
      break;
    case 'respond':
      expect(calls[0]).toMatchObject({ status: 'succeeded', result: { given: 'response', recordedBy: 'alice' } });
      expect(run.answer).toContain(RESPONSE.value);
      break;
    case 'extend':
      expect(run.usage.llmCalls).toBe(3);
      break;
    case 'end':
      expect(run.failure?.code).toBe('run.budget_exceeded');
      break;
    case 'timeout':
      // More time, past the deadline that ran out; the call it cut off ran again in it.
      expect(wait.request).toMatchObject({ budget: 'timeout' });
      expect(wait.answer?.deadline_at).toBeGreaterThan(wait.createdAt);
      expect(calls[0]).toMatchObject({ tool: 'world.stall', status: 'succeeded' });
      expect(calls[0]!.attempts).toBeGreaterThan(1);
      break;
    case 'policy':
      expect(wait).toMatchObject({ kind: 'policy', role: 'admin' });
      break;
    case 'approve':
      expect(calls[0]).toMatchObject({ status: 'succeeded', args: { value: PROPOSED } });
  }
  expect(await problemsOf(b, runtime, runId, kind)).toEqual([]);
}

describe.each(ALL_DIALECTS)('human waits across SIGKILL on %s', (dialect) => {
  skipUnlessAvailable(dialect);

  for (const kind of HUMAN_KINDS) {
    it(`${kind}: killed waiting; decided in a second process killed right after the commit; a third resumes`, async () => {
      const b = await bench(dialect);
      try {
        const { runId, wait } = await startToWait(b, kind);
        const before = effectsOf(b, runId);
        const decider = child(b, { phase: 'decide', kind, runId, approvalId: wait.id }, 'approval.committed=kill');
        expect((await exitOf(decider)).signal).toBe('SIGKILL');
        expect(readText(join(b.dir, 'failpoints.log'))).toContain('approval.committed=kill@1');
        // The decision is durable; the run has not moved on it, nor has anything run.
        const { run, wait: decided } = await rowsOfRun(b, runId);
        expect(run.status).toBe('waiting_human');
        expect(decided).toMatchObject({ id: wait.id, status: DECIDED[kind].status, decided_by: 'alice' });
        expect(effectsOf(b, runId)).toEqual(before);

        const resumer = child(b, { phase: 'resume', kind, runId });
        const ended = await exitOf(resumer);
        expect(ended.code, resumer.stderr()).toBe(0);
        expect(resumer.line('ended')).toMatchObject({ status: expectedEnd(kind).status });
        // What ran after the decision ran in the third process.
        const after = effectsOf(b, runId).slice(before.length);
        expect(after.map((e) => e.pid)).toEqual(after.map(() => resumer.pid));
        await checkKind(b, runtimeOf(b, kind), runId, kind, wait.id);
      } finally {
        await cleanUp(b);
      }
    });

    it(`${kind}: killed waiting; decided and driven to its end by another process`, async () => {
      const b = await bench(dialect);
      try {
        const { runId, wait } = await startToWait(b, kind);
        const before = effectsOf(b, runId);
        const runtime = runtimeOf(b, kind);
        await runtime.decide(runId, wait.id, decisionOf(kind));
        await waitUntil(
          async () => ['succeeded', 'failed'].includes((await runtime.wait(runId)).status),
          'the run to end',
        );
        const after = effectsOf(b, runId).slice(before.length);
        expect(after.map((e) => e.pid)).toEqual(after.map(() => process.pid));
        await checkKind(b, runtime, runId, kind, wait.id);
      } finally {
        await cleanUp(b);
      }
    });
  }

  it('keeps the time a person gave across a SIGKILL: extended, killed at its next wait, it goes on in another process', async () => {
    const b = await bench(dialect);
    try {
      const { runId, wait } = await startToWait(b, 'more_time');
      const decider = child(b, { phase: 'decide', kind: 'more_time', runId, approvalId: wait.id });
      await lineOf(decider, 'decided');
      // The run goes on with its new deadline and stops at the approval of its next call: killed there.
      await waitUntil(async () => {
        const { run, wait: next } = await rowsOfRun(b, runId);
        return run.wait_reason === 'approval' && next?.status === 'pending';
      }, 'the approval of the next call');
      expect((await decider.kill()).signal).toBe('SIGKILL');
      // Restored past the deadline that ran out, the run keeps the one it was given: it takes the approval.
      const runtime = runtimeOf(b, 'more_time');
      const { wait: next } = await rowsOfRun(b, runId);
      await runtime.approve(runId, next!.id, { by: 'alice' });
      await waitUntil(
        async () => ['succeeded', 'failed'].includes((await runtime.wait(runId)).status),
        'the run to end',
      );
      expect(await runtime.get(runId)).toMatchObject({ status: 'succeeded', stopReason: null });
      const effects = effectsOf(b, runId);
      expect(effects.map((e) => [e.value, e.pid])).toEqual([[AFTER_MORE_TIME, process.pid]]);
      expect(await problemsOf(b, runtime, runId, 'more_time')).toEqual([]);
    } finally {
      await cleanUp(b);
    }
  });

  it('expires a wait after a restart at its stored instant (reject): the model is told, and a late decision is refused', async () => {
    const b = await bench(dialect);
    try {
      const { runId, wait } = await startToWait(b, 'approve', { expiresIn: EXPIRES_IN, onExpire: 'reject' });
      expect(wait.expires_at).toBeGreaterThan(wait.created_at);
      expect(JSON.parse(wait.expiry!)).toMatchObject({ outcome: 'reject' });
      await waitUntil(
        () => Date.now() > wait.expires_at! + 20,
        'the expiry instant to pass',
        scaled(60_000) + EXPIRES_IN,
      );
      // A process opened after the instant: its decision comes too late, the expiry applies.
      const late = child(b, { phase: 'decide', kind: 'approve', runId, approvalId: wait.id });
      expect((await exitOf(late)).code, late.stderr()).toBe(0);
      expect(late.line('decide_error')).toMatchObject({ code: 'approval.expired' });
      expect(late.line('ended')).toMatchObject({ status: 'succeeded' });
      const runtime = runtimeOf(b, 'approve');
      const run = await runtime.get(runId);
      expect(run.answer).toContain('rejected');
      expect(effectsOf(b, runId)).toEqual([]);
      expect((await runtime.approvals(runId))[0]).toMatchObject({ status: 'expired', decidedBy: 'baton:expiry' });
      const results = (await eventsOf(runtime, runId)).filter((e) => e.type === 'approval_result');
      expect(results.map((e) => e.data.decision)).toEqual(['expired']);
      expect((await runtime.toolCalls(runId))[0]).toMatchObject({ status: 'rejected' });
      expect(await problemsOf(b, runtime, runId, 'approve')).toEqual([]);
    } finally {
      await cleanUp(b);
    }
  });

  it('expires a wait after a restart at its stored instant (end): the run fails expired, and a late decision is refused', async () => {
    const b = await bench(dialect);
    try {
      const { runId, wait } = await startToWait(b, 'approve', { expiresIn: EXPIRES_IN, onExpire: 'end' });
      await waitUntil(
        () => Date.now() > wait.expires_at! + 20,
        'the expiry instant to pass',
        scaled(60_000) + EXPIRES_IN,
      );
      // A process opened after the instant, with no decision: its wake-up applies the expiry.
      const resumer = child(b, { phase: 'resume', kind: 'approve', runId });
      expect((await exitOf(resumer)).code, resumer.stderr()).toBe(0);
      expect(resumer.line('ended')).toMatchObject({ status: 'failed', stop_reason: 'expired' });
      const runtime = runtimeOf(b, 'approve');
      expect(await runtime.get(runId)).toMatchObject({
        status: 'failed',
        stopReason: 'expired',
        failure: { code: 'approval.expired' },
      });
      await expect(runtime.decide(runId, wait.id, decisionOf('approve'))).rejects.toMatchObject({
        code: 'approval.expired',
      });
      expect(effectsOf(b, runId)).toEqual([]);
      expect((await runtime.approvals(runId))[0]).toMatchObject({ status: 'expired' });
      expect(await problemsOf(b, runtime, runId, 'approve')).toEqual([]);
    } finally {
      await cleanUp(b);
    }
  });

  it('applies one answer once when two processes answer the same question at once, a third holding the file', async () => {
    const b = await bench(dialect);
    try {
      // The starter stays open on the file; the run leaves its memory (and lease) once it waits.
      const { runId, wait } = await startToWait(b, 'ask', {}, true);
      await waitUntil(async () => (await b.rows.getRun(runId))!.owner === null, 'the starter to let go of the run');
      const goFile = join(b.dir, 'go');
      const answer = (by: string, choice: string) =>
        child(b, {
          phase: 'decide',
          kind: 'ask',
          runId,
          approvalId: wait.id,
          goFile,
          decision: { decision: 'answer', by, answer: choice },
        });
      const deciders = [answer('alice', CHOICES[0]!), answer('bob', CHOICES[1]!)];
      for (const d of deciders) await lineOf(d, 'armed');
      writeFileSync(goFile, '');
      for (const d of deciders) expect((await exitOf(d)).code, JSON.stringify([d.lines(), d.stderr()])).toBe(0);

      const winners = deciders.filter((d) => d.line('decided'));
      const losers = deciders.filter((d) => d.line('decide_error'));
      expect(winners).toHaveLength(1);
      expect(losers).toHaveLength(1);
      // The other is told the wait was decided (409), whether it found the run driven or ended.
      expect(losers[0]!.line('decide_error')).toMatchObject({ code: 'approval.already_decided' });
      const winner = winners[0]!.line('decided')!.by as string;
      const choice = winner === 'alice' ? CHOICES[0] : CHOICES[1];
      for (const d of deciders) expect(d.line('ended')).toMatchObject({ status: 'succeeded' });

      const runtime = runtimeOf(b, 'ask');
      // The winner's answer, applied once: one effect, carrying it.
      expect(effectsOf(b, runId).map((e) => e.value)).toEqual([`print ${choice}`]);
      expect((await runtime.approvals(runId))[0]).toMatchObject({
        status: 'approved',
        decidedBy: winner,
        answer: { answer: choice },
      });
      const results = (await eventsOf(runtime, runId)).filter((e) => e.type === 'input_result');
      expect(results.map((e) => e.data.by)).toEqual([winner]);
      expect(await problemsOf(b, runtime, runId, 'ask')).toEqual([]);
    } finally {
      await cleanUp(b);
    }
  });
});
