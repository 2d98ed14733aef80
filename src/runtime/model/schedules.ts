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
  /** One tick at this instant (epoch ms, ISO 8601 or a Date), then the schedule is `done`. */
  at?: number | string | Date;
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

/** A schedule as the API gives it: its definition, and where it stands. */
export interface Schedule extends StoredDefinition {
  /** `active`, `paused`, or `done` (a one-shot `at` that fired, or a cron with no tick left). */
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

const MIN_EVERY_MS = 1_000;

function invalid(message: string, details?: Record<string, unknown>): never {
  fail('input.invalid', message, details ? { details } : {});
}

/** A time zone's name as `Intl` knows it, or `input.invalid`. */
function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    invalid(`Time zone ${JSON.stringify(timezone)} is not an IANA time zone (e.g. Europe/Paris, America/New_York)`, {
      timezone,
    });
  }
}

/** The cron of a definition, parsed (a pattern that does not parse is `input.invalid` naming it). */
function cronOf(pattern: string, timezone: string | null): Cron {
  try {
    return new Cron(pattern, { paused: true, ...(timezone ? { timezone } : {}) });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    invalid(`Cron expression '${pattern}'${timezone ? ` in ${timezone}` : ''} does not parse: ${reason}`, {
      cron: pattern,
    });
  }
}

/** An instant given as epoch ms (a number, or its digits), ISO 8601 or a Date. */
export function instantOf(value: unknown, name: string): number {
  const ms =
    value instanceof Date
      ? value.getTime()
      : typeof value === 'number'
        ? value
        : typeof value === 'string'
          ? /^\d+$/.test(value.trim())
            ? Number(value)
            : Date.parse(value)
          : NaN;
  if (!Number.isFinite(ms) || ms < 0) {
    const given =
      value instanceof Date ? 'an invalid Date' : typeof value === 'number' ? String(value) : JSON.stringify(value);
    invalid(`${name} must be an instant (epoch ms, ISO 8601 or a Date), not ${given}`);
  }
  return Math.round(ms);
}

/** What a definition may hold. */
const FIELDS = new Set([
  'id',
  'cron',
  'timezone',
  'every',
  'at',
  'input',
  'sessionId',
  'context',
  'options',
  'metadata',
  'tags',
  'overlap',
  'catchUp',
]);

/** Checks and normalizes a definition; every problem is `input.invalid`, before anything is stored. */
export function checkDefinition(definition: ScheduleDefinition): StoredDefinition {
  if (typeof definition !== 'object' || definition === null) invalid('A schedule must be an object');
  const unknown = Object.keys(definition).filter((field) => !FIELDS.has(field));
  if (unknown.length > 0) {
    invalid(`A schedule has no ${unknown.join(', ')} (it takes ${[...FIELDS].join(', ')})`, { fields: unknown });
  }
  const { id, cron, timezone, every, at, input } = definition;
  if (typeof id !== 'string' || id.length < 1 || id.length > 128) invalid('A schedule needs an id of 1-128 characters');
  if (typeof input !== 'string' || input.length === 0) invalid(`Schedule '${id}' needs an input (text)`);
  const when = [cron !== undefined, every !== undefined, at !== undefined].filter(Boolean).length;
  if (when !== 1) invalid(`Schedule '${id}' needs exactly one of cron, every and at`);
  if (timezone !== undefined && cron === undefined) invalid(`Schedule '${id}': a timezone goes with cron`);
  if (timezone !== undefined) {
    if (typeof timezone !== 'string') invalid(`Schedule '${id}': timezone must be text`);
    checkTimezone(timezone);
  }
  if (cron !== undefined) {
    if (typeof cron !== 'string') invalid(`Schedule '${id}': cron must be text`);
    if (cronOf(cron, timezone ?? null).nextRun() === null) {
      invalid(`Cron expression '${cron}' never ticks (no instant after now matches it)`, { cron });
    }
  }
  if (every !== undefined && (!Number.isSafeInteger(every) || every < MIN_EVERY_MS)) {
    invalid(
      `Schedule '${id}': every must be a whole number of milliseconds, ${MIN_EVERY_MS} or more (got ${JSON.stringify(every)})`,
    );
  }
  const context = definition.context;
  if (context !== undefined && (typeof context !== 'object' || context === null || Array.isArray(context))) {
    invalid(`Schedule '${id}': context must be an object`);
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
    at: at === undefined ? null : instantOf(at, `Schedule '${id}': at`),
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

/**
 * How late a tick may be taken and still count as on time: later than this (or once a later tick
 * is due too) it was missed, and `catchUp` says what it starts.
 */
export const TICK_GRACE_MS = 60_000;

/** The most ticks looked at to find the last one due (a cron that fired very often during a long downtime). */
const MAX_MISSED_SCAN = 10_000;

/**
 * The ticks of a schedule due at `now`, from its `next_at`: the last one due (the current tick,
 * null when it is more than `TICK_GRACE_MS` late: missed too), the latest missed one (a later
 * tick was due too when it was taken, or it is that late) and how many were missed, and the first
 * tick after `now`.
 */
export function dueTicks(
  definition: StoredDefinition,
  nextAt: number,
  now: number,
  anchor: number,
): { current: number | null; missed: number | null; missedCount: number; next: number | null } {
  const due = walkTicks(definition, nextAt, now, anchor);
  if (now - due.current <= TICK_GRACE_MS) return due;
  // The last tick due is too late to count as on time: missed like the ones before it.
  return { current: null, missed: due.current, missedCount: due.missedCount + 1, next: due.next };
}

/** The ticks due at `now` from `nextAt`, the last one taken as current whatever its lateness. */
function walkTicks(
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
