/**
 * The invariants every run must keep through any crash, checked from the outside: the run's
 * state, its event log, and its ledger against the effects file (what really happened).
 * Each check returns sentences naming the run, so one report can list every problem at once.
 */
import type { Runtime } from '../../src/index.js';
import { eventsOf } from './runtime.js';
import type { EffectLine } from './world.js';
import { storeOf } from '../../src/runtime/internals.js';

const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed']);

/** What the ledger alone cannot tell the check. */
export interface InvariantOptions {
  /**
   * Calls whose ledger status is expected to disagree with the world, mapped to that status:
   * e.g. a tool that reported a failure after its effect happened (the ledger records what
   * the tool said). Their effect must still have happened at most once.
   */
  mismatches?: ReadonlyMap<string, string>;
}

/** The effect class of a world tool's effect line (`world.<effect>` or `world.<effect>.<risk>`). */
function effectOf(line: EffectLine): string {
  return line.tool.split('.')[1] ?? '';
}

/** Every broken invariant of one run; empty when the run is sound. */
export async function runProblems(
  runtime: Runtime,
  runId: string,
  effects: readonly EffectLine[],
  options: InvariantOptions = {},
): Promise<string[]> {
  const problems: string[] = [];
  const say = (text: string) => problems.push(`run ${runId}: ${text}`);
  const run = await runtime.get(runId);

  // Terminal, or resumably waiting on an approval that exists.
  if (run.status === 'waiting_human') {
    const pending = (await runtime.approvals(runId)).find((a) => a.id === run.pendingApprovalId);
    if (pending?.status !== 'pending') say(`waits for approval '${run.pendingApprovalId}', which is not pending`);
  } else if (!TERMINAL.has(run.status)) {
    say(`ends in status '${run.status}', neither terminal nor waiting for a human`);
  }
  if (run.status === 'failed' && !run.stopReason) say('failed without a stop reason');
  if (run.status === 'failed' && run.stopReason !== 'rejected' && !run.failure) say('failed without a failure');

  // The ledger against the outside world: at most one effect per key, and `succeeded` ⇔ the effect.
  const mine = effects.filter((e) => e.key.startsWith(`${runId}.`));
  const count = new Map<string, number>();
  for (const line of mine) if (effectOf(line) !== 'read') count.set(line.key, (count.get(line.key) ?? 0) + 1);
  for (const [key, n] of count) if (n > 1) say(`call ${key} took effect ${n} times`);
  // Through the public API, so the same checks hold on either dialect.
  const rows = await runtime.toolCalls(runId);
  const byId = new Map(rows.map((row) => [row.id, row]));
  for (const key of count.keys()) if (!byId.has(key)) say(`call ${key} took effect but has no ledger row`);
  for (const row of rows) {
    // A finished run leaves no call in flight.
    if (TERMINAL.has(run.status) && row.status === 'started')
      say(`call ${row.id} is still 'started' in a finished run`);
    if (row.effect === 'read') continue;
    const happened = count.has(row.id);
    const expected = options.mismatches?.get(row.id);
    if (expected !== undefined) {
      if (row.status !== expected || !happened) {
        say(
          `call ${row.id} is '${row.status}' (expected '${expected}') and ${happened ? 'took' : 'did not take'} effect`,
        );
      }
    } else if ((row.status === 'succeeded') !== happened) {
      say(`call ${row.id} is '${row.status}' in the ledger but ${happened ? 'took' : 'did not take'} effect`);
    }
  }

  // Events 1..n without gaps; the API's view is the whole log (nothing hides after a terminal event).
  const events = await eventsOf(runtime, runId);
  const stored = [];
  for (let page = await runtime.readEvents(runId, { limit: 10_000 }); page.length > 0;) {
    stored.push(...page);
    page = page.length < 10_000 ? [] : await runtime.readEvents(runId, { after: page.at(-1)!.seq, limit: 10_000 });
  }
  const seqs = stored.map((e) => e.seq);
  if (seqs.some((seq, i) => seq !== i + 1)) say(`event seqs have gaps: ${seqs.join(',')}`);
  if (events.length !== stored.length) say(`${stored.length - events.length} events follow the terminal state event`);
  if (stored[0]?.type !== 'run.created') say(`the first event is '${stored[0]?.type}', not 'run.created'`);

  // State events chain from `pending`, never leave a terminal state, and end where the run row is.
  let state = 'pending';
  let terminals = 0;
  for (const event of stored) {
    if (event.type !== 'state') continue;
    const data = event.data as { from: string; to: string };
    if (TERMINAL.has(state)) say(`event ${event.seq} leaves terminal state '${state}' for '${data.to}'`);
    if (data.from !== state) say(`event ${event.seq} goes from '${data.from}' but the run was '${state}'`);
    if (TERMINAL.has(data.to)) {
      terminals += 1;
      if (event.seq !== stored.length) say(`terminal event ${event.seq} is not the last (${stored.length})`);
    }
    state = data.to;
  }
  if (terminals > 1) say(`${terminals} terminal state events`);
  if (state !== run.status) say(`the last state event says '${state}', the run row '${run.status}'`);
  return problems;
}

/** SQLite's own check of the file. */
export function integrityProblems(runtime: Runtime): string[] {
  const result = storeOf(runtime).db.sqlite.pragma('integrity_check', { simple: true });
  return result === 'ok' ? [] : [`integrity_check: ${String(result)}`];
}
