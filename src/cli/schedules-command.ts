/**
 * `baton schedules`: list the schedules, create one, show, pause, resume, trigger a run now, or
 * delete one. Schedules tick in the processes that claim runs (`baton serve`, `baton worker`).
 */
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { usageError } from './cli-error.js';
import { toDurationMs } from './duration.js';
import type { ScheduleJson, RunJson } from './api-json.js';
import type { ScheduleBody } from './backend.js';
import {
  AGENT_HELP,
  AGENT_OPTIONS,
  HELP_FLAG,
  TARGET_HELP,
  TARGET_OPTIONS,
  takePositionals,
  toMetadata,
  toTags,
} from './parse-flags.js';
import { terminalText } from './terminal-text.js';

/** The usage text of `baton schedules`. */
export const SCHEDULES_USAGE = `Usage: baton schedules [list] [--json]
       baton schedules create <id> (--cron <expr> [--tz <zone>] | --every <duration> | --at <instant>)
                       --input <text> [--session <id>] [--overlap skip|enqueue|allow]
                       [--catch-up none|one] [--metadata <key>=<value>]... [--tag <tag>]...
       baton schedules show|pause|resume|trigger|delete <id> [--json]
                       [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Schedules start runs at their ticks: a cron expression (5 fields, or 6 with seconds first; in
--tz, default UTC), every <duration> (1s or more), or once --at an instant (ISO 8601). Each tick
starts one run, whichever processes tick it: 'baton serve' and 'baton worker' do (a command like
this one only stores the schedule). While the last run is active a tick is skipped (--overlap
skip, the default), queued behind it in the schedule's session (enqueue), or started anyway
(allow). Ticks missed while no process ticked start nothing (--catch-up none, the default) or one
run (one). 'trigger' starts a run now; 'pause' stops the ticks until 'resume' (ticks that fell
meanwhile start nothing). A schedule's runs carry the metadata baton.schedule=<id>:
'baton runs --metadata baton.schedule=<id>'.

Options:
  --cron <expr>      e.g. '0 9 * * 1-5' (09:00 on weekdays)
  --tz <zone>        an IANA time zone for --cron, e.g. Europe/Paris
  --every <d>        a tick every <d> (30s, 15m, 1h), the first one <d> from now
  --at <instant>     one tick then, e.g. 2026-12-24T18:00:00Z
  --input <text>     what each run is started with
  --session <id>     the session of its runs (default: one each; with --overlap enqueue, the schedule's)
  --overlap <o>      skip, enqueue or allow (see above)
  --catch-up <c>     none or one (see above)
  --metadata <k>=<v>  kept on each run; repeatable
  --tag <tag>        kept on each run; repeatable
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

With --json, prints the schedule (or { "schedules": [...] }, or the run 'trigger' started) as
one object.

${EXIT_HELP}
`;

const ACTIONS = ['list', 'create', 'show', 'pause', 'resume', 'trigger', 'delete'] as const;
type Action = (typeof ACTIONS)[number];

/** When a schedule ticks, in a few words. */
function whenOf(schedule: ScheduleJson): string {
  if (schedule.cron) return `cron '${schedule.cron}'${schedule.timezone ? ` ${schedule.timezone}` : ''}`;
  if (schedule.every) return `every ${durationText(schedule.every)}`;
  return `at ${new Date(schedule.at!).toISOString()}`;
}

/** A duration in its largest whole unit (90s, 15m, 2h, 1d). */
function durationText(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

const iso = (at: number | null) => (at === null ? '-' : new Date(at).toISOString());

/** A schedule as lines. */
function describeSchedule(schedule: ScheduleJson): string {
  return [
    `Schedule ${schedule.id} ${schedule.status}: ${whenOf(schedule)}, overlap ${schedule.overlap}, catch-up ${schedule.catch_up}`,
    `  input     ${schedule.input}`,
    `  next      ${iso(schedule.next_at)}`,
    `  last      ${iso(schedule.last_tick_at)}${schedule.last_run_id ? ` (run ${schedule.last_run_id})` : ''}`,
    `  runs      ${schedule.runs} started, ${schedule.skipped} ticks skipped`,
  ].join('\n');
}

/** The body of `create` from the flags. */
function createBody(id: string, values: Record<string, unknown>): ScheduleBody {
  const given = ['cron', 'every', 'at'].filter((flag) => values[flag] !== undefined);
  if (given.length !== 1) throw usageError('create needs exactly one of --cron, --every and --at');
  if (typeof values.input !== 'string' || values.input === '') throw usageError('create needs --input <text>');
  if (values.tz !== undefined && values.cron === undefined) throw usageError('--tz goes with --cron');
  const metadata = toMetadata(values.metadata as string[] | undefined);
  const tags = toTags(values.tag as string[] | undefined);
  return {
    id,
    ...(values.cron !== undefined ? { cron: values.cron as string } : {}),
    ...(values.tz !== undefined ? { timezone: values.tz as string } : {}),
    ...(values.every !== undefined ? { every: toDurationMs(values.every as string, '--every') } : {}),
    ...(values.at !== undefined ? { at: values.at as string } : {}),
    input: values.input,
    ...(values.session !== undefined ? { session_id: values.session as string } : {}),
    ...(values.overlap !== undefined ? { overlap: values.overlap as string } : {}),
    ...(values['catch-up'] !== undefined ? { catch_up: values['catch-up'] as string } : {}),
    ...(metadata ? { metadata } : {}),
    ...(tags ? { tags } : {}),
  };
}

/** Runs `baton schedules`; resolves with the exit code. */
export const runSchedulesCommand = defineCommand({
  name: 'schedules',
  usage: SCHEDULES_USAGE,
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    cron: { type: 'string' },
    tz: { type: 'string' },
    every: { type: 'string' },
    at: { type: 'string' },
    input: { type: 'string' },
    session: { type: 'string' },
    overlap: { type: 'string' },
    'catch-up': { type: 'string' },
    metadata: { type: 'string', multiple: true },
    tag: { type: 'string', multiple: true },
  },
  async run({ values, positionals }, { io, open }) {
    const action = (positionals[0] ?? 'list') as Action;
    if (!ACTIONS.includes(action)) {
      throw usageError(`unknown action '${action}': one of ${ACTIONS.join(', ')}`);
    }
    const [id] = takePositionals(positionals.slice(1), { required: action === 'list' ? [] : ['id'] });
    const body = action === 'create' ? createBody(id!, values) : null;
    // Creating stores the schedule for the agent given (its runtimes tick it); nothing here ticks.
    const backend = await open(values, { drive: action === 'create' || action === 'trigger' });
    const answer =
      action === 'create'
        ? await backend.schedules({ op: 'create', body: body! })
        : action === 'list'
          ? await backend.schedules({ op: 'list' })
          : await backend.schedules({ op: action, id: id! });
    if (values.json) {
      io.stdout.write(`${JSON.stringify(answer ?? { deleted: id })}\n`);
      return EXIT.ok;
    }
    if (action === 'list') {
      const { schedules } = answer as { schedules: ScheduleJson[] };
      if (schedules.length === 0) io.stdout.write('No schedules.\n');
      for (const schedule of schedules) {
        io.stdout.write(
          terminalText(
            `${schedule.id}  ${schedule.status}  ${whenOf(schedule)}  next ${iso(schedule.next_at)}  runs ${schedule.runs}\n`,
          ),
        );
      }
    } else if (action === 'delete') {
      io.stdout.write(terminalText(`Schedule ${id} deleted.\n`));
    } else if (action === 'trigger') {
      const run = answer as RunJson;
      // In process the run is left to the processes that claim runs on the database.
      const driver = backend.inProcess ? `; 'baton serve' or 'baton worker' on ${backend.where} drives it` : '';
      io.stdout.write(terminalText(`Schedule ${id} started run ${run.id} (${run.status})${driver}.\n`));
    } else {
      io.stdout.write(`${terminalText(describeSchedule(answer as ScheduleJson))}\n`);
    }
    return EXIT.ok;
  },
});
