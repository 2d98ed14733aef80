/**
 * Schedules (docs/architecture.md §3, "Schedules"): what `runtime.schedule()` takes, checked and
 * normalized, when its ticks fall (a cron expression with its time zone, through `croner`; a
 * fixed interval; one instant), and the schedule as the API gives it back.
 */
import { createHash } from 'node:crypto';
import { Cron } from 'croner';
import { fail } from '../../failure.js';
import type { ScheduleRow } from '../../store/index.js';
import type { RunOptions } from './types.js';
import type { MetadataValue } from './labels.js';
import type { RunUserContext } from '../../tools/define-tool.js';

/** What a tick does while the schedule's last run is still active. */
export const OVERLAPS = ['skip', 'enqueue', 'allow'] as const;
export type Overlap = (typeof OVERLAPS)[number];
/** What ticks missed while no runtime ticked the schedule start: none, or one for all of them. */
export const CATCH_UPS = ['none', 'one'] as const;
export type CatchUp = (typeof CATCH_UPS)[number];

/** What `runtime.schedule()` takes: when (`cron`, `every` or `at`: one of them) and what to start. */
export interface ScheduleDefinition {
  /** The schedule's id (1-128 characters), scoped by tenant like a session's. */
  id: string;
  /** A cron expression (5 or 6 fields, seconds first when 6), in `timezone` (default UTC). */
  cron?: string;
  /** An IANA time zone for `cron` (`Europe/Paris`). */
  timezone?: string;
  /** A tick every this many milliseconds (at least 1,000), the first one interval after it is created. */
  every?: number;
  /** One tick at this instant (epoch ms or ISO 8601), then the schedule is `done`. */
  at?: number | string;
  /** What each run is started with. */
  input: string;
  /** The session its runs are started in (default: a session of their own each; with `overlap: 'enqueue'`, the schedule's). */
  sessionId?: string;
  context?: RunUserContext;
  /** The runs' options (budget, expiry); their idempotency key is the tick's, never these. */
  options?: Omit<RunOptions, 'idempotencyKey'>;
  metadata?: Record<string, MetadataValue>;
  tags?: string[];
  /** While the last run is active: `skip` the tick (default), `enqueue` the run behind it, or `allow` both. */
  overlap?: Overlap;
  /** Ticks missed while no runtime ticked it (a later tick already due when it was taken): `none` (default) or `one` run for them. */
  catchUp?: CatchUp;
}

/** A schedule as the API gives it: its definition, and where it stands. */
export interface Schedule {
  id: string;
  cron: string | null;
  timezone: string | null;
  every: number | null;
  at: number | null;
  input: string;
  sessionId: string | null;
  context: RunUserContext;
  options: Omit<RunOptions, 'idempotencyKey'>;
  metadata: Record<string, MetadataValue>;
  tags: string[];
  overlap: Overlap;
  catchUp: CatchUp;
  /** `active`, `paused`, or `done` (a one-shot `at` that fired). */
  status: 'active' | 'paused' | 'done';
  /** Its next tick (null when paused or done). */
  nextAt: number | null;
  lastTickAt: number | null;
  /** The last run a tick (or `trigger`) started. */
  lastRunId: string | null;
  /** Runs its ticks started, and ticks that started none (skipped while a run was active, or missed). */
  runs: number;
  skipped: number;
  createdAt: number;
  updatedAt: number;
}

/** The normalized definition, as stored (JSON): every field present, client ids unscoped. */
export interface StoredDefinition {
  id: string;
  cron: string | null;
  timezone: string | null;
  every: number | null;
  at: number | null;
  input: string;
  sessionId: string | null;
  context: RunUserContext;
  options: Omit<RunOptions, 'idempotencyKey'>;
  metadata: Record<string, MetadataValue>;
  tags: string[];
  overlap: Overlap;
  catchUp: CatchUp;
}

const MIN_EVERY_MS = 1_000;

function invalid(message: string, details?: Record<string, unknown>): never {
  fail('input.invalid', message, details ? { details } : {});
}

/** The cron of a definition, parsed (a pattern that does not parse is `input.invalid` naming it). */
function cronOf(pattern: string, timezone: string | null): Cron {
  try {
    const cron = new Cron(pattern, { paused: true, ...(timezone ? { timezone } : {}) });
    // A time zone is checked only when an instant is computed in it.
    if (timezone) cron.nextRun();
    return cron;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    invalid(`Cron expression '${pattern}'${timezone ? ` in ${timezone}` : ''} does not parse: ${reason}`, {
      cron: pattern,
    });
  }
}

/** An instant given as epoch ms or ISO 8601. */
function instantOf(value: unknown): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms) || ms < 0)
    invalid(`'at' must be an instant (epoch ms or ISO 8601), not ${JSON.stringify(value)}`);
  return Math.round(ms);
}

/** Checks and normalizes a definition; every problem is `input.invalid`, before anything is stored. */
export function checkDefinition(definition: ScheduleDefinition): StoredDefinition {
  if (typeof definition !== 'object' || definition === null) invalid('A schedule must be an object');
  const { id, cron, timezone, every, at, input } = definition;
  if (typeof id !== 'string' || id.length < 1 || id.length > 128) invalid('A schedule needs an id of 1-128 characters');
  if (typeof input !== 'string' || input.length === 0) invalid(`Schedule '${id}' needs an input (text)`);
  const when = [cron !== undefined, every !== undefined, at !== undefined].filter(Boolean).length;
  if (when !== 1) invalid(`Schedule '${id}' needs exactly one of cron, every and at`);
  if (timezone !== undefined && cron === undefined) invalid(`Schedule '${id}': a timezone goes with cron`);
  if (cron !== undefined) {
    if (typeof cron !== 'string') invalid(`Schedule '${id}': cron must be text`);
    cronOf(cron, timezone ?? null);
  }
  if (every !== undefined && (!Number.isSafeInteger(every) || every < MIN_EVERY_MS)) {
    invalid(
      `Schedule '${id}': every must be a whole number of milliseconds, ${MIN_EVERY_MS} or more (got ${String(every)})`,
    );
  }
  const overlap = definition.overlap ?? 'skip';
  if (!OVERLAPS.includes(overlap)) invalid(`Schedule '${id}': overlap must be one of ${OVERLAPS.join(', ')}`);
  const catchUp = definition.catchUp ?? 'none';
  if (!CATCH_UPS.includes(catchUp)) invalid(`Schedule '${id}': catchUp must be one of ${CATCH_UPS.join(', ')}`);
  const options = { ...(definition.options ?? {}) } as RunOptions;
  if ('idempotencyKey' in options) invalid(`Schedule '${id}': its runs' idempotency keys are their ticks'`);
  return {
    id,
    cron: cron ?? null,
    timezone: timezone ?? null,
    every: every ?? null,
    at: at === undefined ? null : instantOf(at),
    input,
    sessionId: definition.sessionId ?? null,
    context: definition.context ?? {},
    options,
    metadata: definition.metadata ?? {},
    tags: definition.tags ?? [],
    overlap,
    catchUp,
  };
}

/** The hash a schedule's id is bound to: the same id with another definition is a conflict. */
export function specHash(definition: StoredDefinition): string {
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex');
}

/**
 * The first tick after `after` (ms), or null when there is none: the next cron instant, the next
 * multiple of `every` counted from `anchor` (the schedule's creation), or `at` once.
 */
export function tickAfter(definition: StoredDefinition, after: number, anchor: number): number | null {
  if (definition.cron !== null) {
    const next = cronOf(definition.cron, definition.timezone).nextRun(new Date(after));
    return next ? next.getTime() : null;
  }
  if (definition.every !== null) {
    const k = Math.max(0, Math.floor((after - anchor) / definition.every)) + 1;
    return anchor + k * definition.every;
  }
  return definition.at !== null && definition.at > after ? definition.at : null;
}

/** The most ticks looked at to find the last one due (a cron that fired very often during a long downtime). */
const MAX_MISSED_SCAN = 10_000;

/**
 * The ticks of a schedule due at `now`, from its `next_at`: the last one due (the current tick),
 * the latest of those before it (missed: a later tick was already due when it was taken), and
 * the first tick after `now`.
 */
export function dueTicks(
  definition: StoredDefinition,
  nextAt: number,
  now: number,
  anchor: number,
): { current: number; missed: number | null; missedCount: number; next: number | null } {
  let current = nextAt;
  let missed: number | null = null;
  if (definition.every !== null && now - nextAt >= definition.every) {
    // Arithmetic rather than a walk: the last multiple due, and the one before it.
    current = anchor + Math.floor((now - anchor) / definition.every) * definition.every;
    missed = current - definition.every;
    const missedCount = Math.round((current - nextAt) / definition.every);
    return { current, missed, missedCount, next: current + definition.every };
  }
  let missedCount = 0;
  let next = tickAfter(definition, current, anchor);
  for (; next !== null && next <= now && missedCount < MAX_MISSED_SCAN; missedCount += 1) {
    missed = current;
    current = next;
    next = tickAfter(definition, current, anchor);
  }
  // More missed than were looked at: the rest are skipped, counted as one.
  if (next !== null && next <= now) {
    missedCount += 1;
    missed = current;
    next = tickAfter(definition, now, anchor);
  }
  return { current, missed, missedCount, next };
}

/** A schedule's row as the API gives it, its client id unscoped. */
export function toSchedule(row: ScheduleRow): Schedule {
  const definition = JSON.parse(row.definition) as StoredDefinition;
  return {
    ...definition,
    status: row.status,
    nextAt: row.next_at,
    lastTickAt: row.last_tick_at,
    lastRunId: row.last_run_id,
    runs: row.runs,
    skipped: row.skipped,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
