/**
 * Schedules (docs/architecture.md §3, "Schedules"): storing them, their commands (pause, resume,
 * delete, trigger now), and the scheduler of a runtime that claims runs, which takes the ticks
 * due. A tick starts its run first, with the tick's idempotency key (`schedule:<id>:<instant>`),
 * then takes the tick by a compare-and-set on `next_at`: whichever runtimes see it due and
 * whenever one of them dies, the tick starts one run.
 */
import { fail, toFailure, type Failure } from '../../failure.js';
import type { AgentSet, ScheduleRow, Store } from '../../store/index.js';
import {
  checkDefinition,
  dueTicks,
  specHash,
  tickAfter,
  toSchedule,
  type Schedule,
  type ScheduleDefinition,
  type StoredDefinition,
} from '../model/schedules.js';
import { DEFAULT_TENANT, scopeKey } from '../model/tenant-keys.js';
import type { Run, StartRequest } from '../model/types.js';
import { moveOrphanQueues } from './session-queue.js';
import { planNewRun } from './new-run.js';

/** Which tenant's schedule an id names (the default tenant's when none is given). */
export interface ScheduleScope {
  tenant?: string | null;
}

/** What the schedules need of their runtime. */
export interface ScheduleDeps {
  store: Store;
  /** The runtime's agent, recorded on its schedules: runtimes of that agent tick them. */
  agent: string;
  agents: AgentSet;
  assertOpen(): void;
  start(request: StartRequest): Promise<Run>;
  getRun(runId: string): Promise<Run | null>;
  onError(failure: Failure, where: { activity: string; schedule?: string }): void;
}

/** The schedule commands of a runtime. */
export interface ScheduleCommands {
  schedule(definition: ScheduleDefinition): Promise<Schedule>;
  getSchedule(id: string, scope?: ScheduleScope): Promise<Schedule>;
  listSchedules(opts?: ScheduleScope & { after?: string; limit?: number }): Promise<Schedule[]>;
  pauseSchedule(id: string, scope?: ScheduleScope): Promise<Schedule>;
  resumeSchedule(id: string, scope?: ScheduleScope): Promise<Schedule>;
  deleteSchedule(id: string, scope?: ScheduleScope): Promise<void>;
  triggerSchedule(id: string, scope?: ScheduleScope): Promise<Run>;
}

const ACTIVE_RUN = new Set(['queued', 'pending', 'planning', 'executing', 'waiting_human']);

function tenantOf(scope: ScheduleScope | undefined): string {
  return scope?.tenant ?? DEFAULT_TENANT;
}

/** The run a tick (or a trigger at `instant`) starts. */
function tickRequest(
  definition: StoredDefinition,
  tenant: string | null,
  key: string,
  instant: number,
  catchUp = false,
): StartRequest {
  const enqueue = definition.overlap === 'enqueue';
  const sessionId = definition.sessionId ?? (enqueue ? `schedule:${definition.id}` : undefined);
  return {
    input: definition.input,
    ...(sessionId ? { sessionId } : {}),
    ...(enqueue ? { onBusy: 'enqueue' as const } : {}),
    context: { ...definition.context, ...(tenant && tenant !== DEFAULT_TENANT ? { tenant_id: tenant } : {}) },
    options: { ...definition.options, idempotencyKey: key },
    metadata: {
      ...definition.metadata,
      'baton.schedule': definition.id,
      'baton.tick': instant,
      // The run of the ticks missed while no runtime ticked the schedule (`catchUp: 'one'`).
      ...(catchUp ? { 'baton.catch_up': true } : {}),
    },
    tags: definition.tags,
  };
}

/** Creates the schedule commands. */
export function createScheduleCommands(deps: ScheduleDeps, poke: () => void): ScheduleCommands {
  const { store } = deps;

  async function rowOf(id: string, scope: ScheduleScope | undefined): Promise<ScheduleRow> {
    const row = await store.getSchedule(scopeKey(tenantOf(scope), id));
    if (!row) fail('schedule.not_found', `Schedule '${id}' not found`, { details: { schedule_id: id } });
    return row;
  }

  return {
    async schedule(given) {
      deps.assertOpen();
      const definition = checkDefinition(given);
      if (Object.keys(definition.metadata).length > 29) {
        fail('input.invalid', `Schedule '${definition.id}': at most 29 metadata entries (its runs add up to three)`);
      }
      const tenant = definition.context.tenant_id ?? null;
      const id = scopeKey(tenant, definition.id);
      const now = Date.now();
      // What each tick starts is checked now, as start() checks it: a definition whose runs
      // could not start is refused rather than skipped at every tick.
      planNewRun(tickRequest(definition, tenant, `schedule:${definition.id}:check`, now));
      const hash = specHash(definition);
      const first = tickAfter(definition, definition.at !== null ? -1 : now, now);
      const row: ScheduleRow = {
        id,
        tenant_id: tenant,
        agent: deps.agent,
        definition: JSON.stringify(definition),
        spec_hash: hash,
        status: first === null ? 'done' : 'active',
        next_at: first,
        last_tick_at: null,
        last_run_id: null,
        runs: 0,
        skipped: 0,
        created_at: now,
        updated_at: now,
      };
      if (!(await store.insertSchedule(row))) {
        const existing = await store.getSchedule(id);
        if (existing && existing.spec_hash !== hash) {
          fail('schedule.conflict', `Schedule '${definition.id}' exists with another definition`, {
            details: { schedule_id: definition.id },
          });
        }
        if (existing) return toSchedule(existing);
      }
      poke();
      return toSchedule(row);
    },
    async getSchedule(id, scope) {
      return toSchedule(await rowOf(id, scope));
    },
    async listSchedules(opts = {}) {
      const tenant = opts.tenant === undefined ? null : tenantOf(opts);
      const prefix = tenant === null ? '' : `${tenant}:`;
      const after = opts.after === undefined ? '' : `${prefix}${opts.after}`;
      const rows = await store.listSchedules(tenant, after, Math.min(Math.max(1, opts.limit ?? 100), 1_000));
      return rows.map(toSchedule);
    },
    async pauseSchedule(id, scope) {
      deps.assertOpen();
      const row = await rowOf(id, scope);
      if (row.status === 'active') await store.setScheduleStatus(row.id, 'active', 'paused', null, Date.now());
      else if (row.status === 'done') fail('schedule.invalid_transition', `Schedule '${id}' is done: nothing to pause`);
      return toSchedule((await store.getSchedule(row.id)) ?? row);
    },
    async resumeSchedule(id, scope) {
      deps.assertOpen();
      const row = await rowOf(id, scope);
      if (row.status === 'paused') {
        // The ticks that fell while it was paused start nothing: the next is the first after now.
        const definition = JSON.parse(row.definition) as StoredDefinition;
        const next = tickAfter(definition, Date.now(), row.created_at);
        await store.setScheduleStatus(row.id, 'paused', next === null ? 'done' : 'active', next, Date.now());
        poke();
      } else if (row.status === 'done') {
        fail('schedule.invalid_transition', `Schedule '${id}' is done: nothing to resume`);
      }
      return toSchedule((await store.getSchedule(row.id)) ?? row);
    },
    async deleteSchedule(id, scope) {
      deps.assertOpen();
      const row = await rowOf(id, scope);
      await store.deleteSchedule(row.id);
    },
    async triggerSchedule(id, scope) {
      deps.assertOpen();
      const row = await rowOf(id, scope);
      const definition = JSON.parse(row.definition) as StoredDefinition;
      const now = Date.now();
      const run = await deps.start(
        tickRequest(definition, row.tenant_id, `schedule:${definition.id}:trigger:${now}`, now),
      );
      await store.countTrigger(row.id, run.id, Date.now());
      return run;
    },
  };
}

/** What a tick did: the runs it started, the ticks it skipped, the last run. */
interface TickOutcome {
  started: number;
  skipped: number;
  lastRunId: string | null;
}

/** The longest the scheduler sleeps before it looks again (for schedules other processes made). */
const LOOK_EVERY_MS = 1_000;
/** Schedules taken per look. */
const BATCH = 32;

/** A runtime's schedules: its commands, and its scheduler (started by a runtime that claims runs). */
export interface Scheduling {
  commands: ScheduleCommands;
  start(): void;
  stop(): void;
}

/** Creates a runtime's schedules; its scheduler ticks only once `start()` is called. */
export function createScheduling(deps: ScheduleDeps): Scheduling {
  let scheduler: { stop(): void; poke(): void } | null = null;
  let stopped = false;
  return {
    commands: createScheduleCommands(deps, () => scheduler?.poke()),
    start() {
      if (!stopped && !scheduler) scheduler = startScheduler(deps);
    },
    stop() {
      stopped = true;
      scheduler?.stop();
    },
  };
}

/**
 * The scheduler of a runtime that claims runs: it takes the ticks due, at their instants, and
 * hands on the runs started with `startAt` once they are due.
 */
function startScheduler(deps: ScheduleDeps): { stop(): void; poke(): void } {
  const { store } = deps;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running = false;
  let again = false;

  async function lastActive(runId: string | null): Promise<boolean> {
    if (runId === null) return false;
    const run = await deps.getRun(runId);
    return run !== null && ACTIVE_RUN.has(run.status);
  }

  async function startTick(
    row: ScheduleRow,
    definition: StoredDefinition,
    instant: number,
    catchUp: boolean,
  ): Promise<string | null> {
    try {
      const key = `schedule:${definition.id}:${instant}`;
      const run = await deps.start(tickRequest(definition, row.tenant_id, key, instant, catchUp));
      return run.id;
    } catch (error) {
      // A tick whose run cannot start (its session busy, a tenant over its cap) starts nothing.
      deps.onError(toFailure(error), { activity: 'starting a scheduled run', schedule: definition.id });
      return null;
    }
  }

  async function tick(row: ScheduleRow, now: number): Promise<void> {
    const definition = JSON.parse(row.definition) as StoredDefinition;
    const due = dueTicks(definition, row.next_at!, now, row.created_at);
    const outcome: TickOutcome = { started: 0, skipped: due.missedCount, lastRunId: null };
    const catchUp = definition.catchUp === 'one' && due.missed !== null ? [due.missed] : [];
    const instants = [...catchUp, ...(due.current !== null ? [due.current] : [])];
    outcome.skipped -= catchUp.length;
    for (const instant of instants) {
      if (definition.overlap === 'skip' && (await lastActive(outcome.lastRunId ?? row.last_run_id))) {
        outcome.skipped += 1;
        continue;
      }
      const runId = await startTick(row, definition, instant, instant !== due.current);
      if (runId === null) outcome.skipped += 1;
      else {
        outcome.started += 1;
        outcome.lastRunId = runId;
      }
    }
    // Taken once its runs exist: a runtime that died before this leaves the tick to the next one,
    // whose start finds the same runs by their keys.
    await store.takeTick({
      id: row.id,
      expected: row.next_at!,
      next_at: due.next,
      tick_at: due.current ?? due.missed!,
      run_id: outcome.lastRunId,
      started: outcome.started,
      skipped: outcome.skipped,
      now: Date.now(),
    });
  }

  async function look(): Promise<void> {
    timer = undefined;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      for (;;) {
        const now = Date.now();
        const due = await store.dueSchedules(now, BATCH, deps.agents);
        for (const row of due) {
          if (stopped) return;
          await tick(row, now).catch((error: unknown) =>
            deps.onError(toFailure(error), { activity: 'taking a schedule tick', schedule: row.id }),
          );
        }
        if (due.length < BATCH) break;
      }
      // Runs started with `startAt` whose instant came: made `pending`, for any claiming runtime.
      const delayed = await store.nextDelayedStart();
      if (delayed !== null && delayed <= Date.now()) await moveOrphanQueues(store);
    } catch (error) {
      deps.onError(toFailure(error), { activity: 'looking for schedule ticks' });
    } finally {
      running = false;
    }
    if (stopped) return;
    if (again) {
      again = false;
      return void look();
    }
    const [next, delayed] = await Promise.all([
      store.nextScheduleAt().catch(() => null),
      store.nextDelayedStart().catch(() => null),
    ]);
    const soonest = Math.min(next ?? Infinity, delayed ?? Infinity);
    arm(Math.min(LOOK_EVERY_MS, soonest - Date.now()));
  }

  function arm(inMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void look(), Math.max(0, inMs));
    timer.unref();
  }

  arm(0);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
    poke() {
      if (!running) arm(0);
      else again = true;
    },
  };
}
