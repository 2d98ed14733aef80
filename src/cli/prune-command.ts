/**
 * `baton prune`: deletes finished runs older than a duration from a database, with their events,
 * steps, ledger, approvals, session history and the artifacts no remaining run stored. It works
 * on the database itself (the operator's job, like a backup), beside running servers and
 * workers: it never touches an active or waiting run.
 */
import { isTerminalStatus } from '../../machines/run-status.js';
import { TERMINAL_STATUSES } from '../../machines/types.js';
import { createRuntime, createScriptedPlanner, type PruneReport } from '../index.js';
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { toDurationMs } from './duration.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { requireBatonDatabase } from './database-exists.js';
import { DEFAULT_DB, databaseOf } from './open-backend.js';
import { takePositionals, toPositiveInt } from './parse-flags.js';

/** The usage text of `baton prune`. */
export const PRUNE_USAGE = `Usage: baton prune --older-than <duration> [--status succeeded|failed] [--keep-last <n>]
                   [--dry-run] [--db <file>|<postgres-url>] [--json]

Deletes runs that finished (succeeded or failed) longer ago than --older-than, with their
events, steps, tool calls, approvals and session history, the artifacts no remaining run
stored, and sessions left without runs. Never an active or waiting run, nor a finished run
whose session has an active one. Works in batches beside running servers and workers; on a
SQLite file created by this version, the freed space goes back to the file system.

Options:
  --older-than <d>  finished longer ago than this, a number with its unit: 30d, 12h, 15m,
                    90s, 500ms (a bare number is refused)
  --status <s>      only runs that ended so: succeeded or failed (default both)
  --keep-last <n>   keep the newest n finished runs however old
  --dry-run         count what would be deleted; change nothing
  --db <db>         SQLite database file (default ${DEFAULT_DB}) or postgres://… URL
  --json            print the report as one JSON object
  -h, --help        show this help

${EXIT_HELP}
`;

/** A prune report as `--json` prints it. */
export function toPruneJson(report: PruneReport) {
  return {
    dry_run: report.dryRun,
    runs: report.runs,
    events: report.events,
    steps: report.steps,
    tool_calls: report.toolCalls,
    approvals: report.approvals,
    messages: report.messages,
    sessions: report.sessions,
    artifacts: report.artifacts,
    artifact_bytes: report.artifactBytes,
    batches: report.batches,
    longest_batch_ms: report.longestBatchMs,
    reclaimed_bytes: report.reclaimedBytes,
    duration_ms: report.durationMs,
  };
}

/** One line saying what a prune did. */
export function describePrune(report: PruneReport): string {
  const verb = report.dryRun ? 'Would delete' : 'Deleted';
  return (
    `${verb} ${report.runs} runs (${report.events} events, ${report.steps} steps, ${report.toolCalls} tool calls, ` +
    `${report.approvals} approvals, ${report.messages} messages, ${report.sessions} sessions) and ` +
    `${report.artifacts} artifacts (${report.artifactBytes} bytes)` +
    (report.dryRun ? '' : ` in ${report.batches} batches; ${report.reclaimedBytes} bytes given back to the file system`)
  );
}

/** Runs `baton prune`; resolves with the exit code. */
export const runPruneCommand = defineCommand({
  name: 'prune',
  usage: PRUNE_USAGE,
  options: {
    'older-than': { type: 'string' },
    status: { type: 'string' },
    'keep-last': { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    db: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  async run({ values, positionals }, { io }) {
    takePositionals(positionals, { required: [] });
    if (values['older-than'] === undefined) throw usageError('prune needs --older-than <duration> (e.g. 30d)');
    const olderThan = toDurationMs(values['older-than'], '--older-than');
    const status = values.status;
    if (status !== undefined && !isTerminalStatus(status)) {
      throw usageError(
        `--status must be ${TERMINAL_STATUSES.join(' or ')} (only finished runs are pruned), not '${status}'`,
      );
    }
    const keepLast = values['keep-last'] === '0' ? 0 : toPositiveInt(values['keep-last'], '--keep-last');
    const database = databaseOf(values.db);
    // Opening would create the file (or Baton's tables) and report nothing deleted: a mistyped
    // --db is said to be one.
    await requireBatonDatabase(database, values.db ?? DEFAULT_DB);
    // Drives nothing and resumes nothing: it only reads and deletes finished runs.
    const runtime = createRuntime({
      database,
      planner: createScriptedPlanner([]),
      tools: [],
      recover: false,
      drive: false,
    });
    try {
      const report = await runtime.prune({
        finishedBefore: Date.now() - olderThan,
        ...(status ? { status } : {}),
        ...(keepLast !== undefined ? { keepLast } : {}),
        dryRun: values['dry-run'],
      });
      io.stdout.write(values.json ? `${JSON.stringify(toPruneJson(report))}\n` : `${describePrune(report)}\n`);
      return EXIT.ok;
    } finally {
      await runtime.close();
    }
  },
});
