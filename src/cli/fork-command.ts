/**
 * `baton fork <run> --at-step N`: a new run whose steps before N are the run's, copied and never
 * run again, which plans step N on (with a given `--decision`, or another `--input` at step 0).
 * `baton rerun`: forks every finished run a filter matches at the step it ended in, in batches;
 * the same rerun again creates nothing. In process the forks are driven here until they end or
 * wait for a person; against a server, the server drives them.
 */
import { toRunExitCode, summarizeRun } from './summarize-run.js';
import type { RerunReportJson } from './api-json.js';
import { usageError } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { defineCommand } from './define-command.js';
import { toDurationMs } from './duration.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import {
  AGENT_HELP,
  AGENT_OPTIONS,
  HELP_FLAG,
  TARGET_HELP,
  TARGET_OPTIONS,
  takePositionals,
  toCount,
  toJsonValue,
  toPositiveInt,
} from './parse-flags.js';
import { terminalText } from './terminal-text.js';
import type { ForkBody, RerunBody } from '../server/routes/fork-body.js';

/** The usage text of `baton fork`. */
export const FORK_USAGE = `Usage: baton fork <run> --at-step <n> [--decision <json>] [--input <text>]
                  [--repeat-effects ask|allow] [--json]
                  [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Forks a run at step n: the new run's steps before n are the run's (decisions, tool results,
approvals), copied and never run again; from step n on it runs live. The run itself does not
change. A call of the fork that would repeat an effect the run had (the same tool and
arguments, not a read) waits for a person, unless --repeat-effects allow. In process the
fork is planned by --agent; a run of another agent is forked only when --agent is given.

Options:
  --at-step <n>     the first step the fork plans itself (0 up to the run's current step)
  --decision <json> the decision of step n instead of the planner's, e.g.
                    '{"type":"tool_calls","calls":[{"tool":"configs.archive","args":{"files":["a.json"]}}]}'
                    or '{"type":"final","answer":"…"}'
  --input <text>    another input (only with --at-step 0)
  --repeat-effects <ask|allow>
                    ask (the default): a repeated effect waits for a person; allow: it runs
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

In process the fork is driven until it ends or waits for a person; against a server, the
command prints the fork as created. With --json, prints the fork as one object.

${EXIT_HELP}
`;

/** Runs `baton fork`; resolves with the exit code. */
export const runForkCommand = defineCommand({
  name: 'fork',
  usage: FORK_USAGE,
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    'at-step': { type: 'string' },
    decision: { type: 'string' },
    input: { type: 'string' },
    'repeat-effects': { type: 'string' },
  },
  async run({ values, positionals }, { io, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const atStep = toCount(values['at-step'], '--at-step');
    if (atStep === undefined) throw usageError('missing --at-step <n>');
    const body: ForkBody = {
      at_step: atStep,
      ...(values.decision === undefined
        ? {}
        : { decision: toJsonValue(values.decision, '--decision') as ForkBody['decision'] }),
      ...(values.input === undefined ? {} : { input: values.input }),
      ...(values['repeat-effects'] === undefined ? {} : { repeat_effects: repeatEffects(values['repeat-effects']) }),
    };
    const backend = await open(values, { drive: true, runId });
    // An agent named on the command line forks another agent's run for itself (in process).
    const created = await backend.fork(runId!, body, { ownAgent: values.agent !== undefined });
    const run = backend.inProcess ? await backend.settle(created.id) : created;
    if (values.json) io.stdout.write(`${JSON.stringify(run)}\n`);
    else {
      io.stdout.write(`Forked ${runId} at step ${atStep}: run ${run.id} (session ${run.session_id})\n`);
      summarizeRun(run, io, false);
    }
    return backend.inProcess ? toRunExitCode(run) : EXIT.ok;
  },
});

function repeatEffects(value: string): 'ask' | 'allow' {
  if (value !== 'ask' && value !== 'allow') throw usageError(`--repeat-effects is ask or allow, not '${value}'`);
  return value;
}

/** The usage text of `baton rerun`. */
export const RERUN_USAGE = `Usage: baton rerun [--status failed|succeeded] [--failure-code <code>] [--since <duration>]
                   [--session <id>] [--dry-run] [--batch-size <n>] [--limit <n>]
                   [--repeat-effects ask|allow] [--json]
                   [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

Reruns finished runs after an incident (a model outage, say): forks each run the filter
matches at the step it ended in (the step whose planner or tool call failed), in batches,
and reports each fork. A run rerun before by the same command is not forked again: the
second rerun lists the forks the first made.

Options:
  --status <status>      failed (the default) or succeeded
  --failure-code <code>  only runs that failed with this code, e.g. planner.unavailable
  --since <duration>     only runs that ended within it, e.g. 1h, 30m, 2d
  --session <id>         only the runs of this session
  --dry-run              list what would be forked; fork nothing
  --batch-size <n>       forks made together (default 20)
  --limit <n>            at most this many runs (default 1000)
  --repeat-effects <ask|allow>
                         what a fork's repeat of an effect its run had does (default ask)
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

In process the forks are driven until each ends or waits for a person. With --json, prints
the report as one object (the API's POST /v1/reruns answer). Exits 1 when a run could not be
forked or a fork driven here failed again. Runs a rerun made are never matched by another
rerun: fork one with 'baton fork' to try it again.

${EXIT_HELP}
`;

/** Runs `baton rerun`; resolves with the exit code. */
export const runRerunCommand = defineCommand({
  name: 'rerun',
  usage: RERUN_USAGE,
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    status: { type: 'string' },
    'failure-code': { type: 'string' },
    since: { type: 'string' },
    session: { type: 'string' },
    'dry-run': { type: 'boolean', default: false },
    'batch-size': { type: 'string' },
    limit: { type: 'string' },
    'repeat-effects': { type: 'string' },
  },
  async run({ values, positionals }, { io, open }) {
    takePositionals(positionals, { required: [] });
    if (
      !values['dry-run'] &&
      !['status', 'failure-code', 'since', 'session'].some((flag) => values[flag as 'status'] !== undefined)
    ) {
      throw usageError(
        'name the runs to rerun: --status, --failure-code, --since or --session (or --dry-run to see them)',
      );
    }
    const status = values.status;
    if (status !== undefined && status !== 'failed' && status !== 'succeeded') {
      throw usageError(`--status is failed or succeeded, not '${status}'`);
    }
    const batch = toPositiveInt(values['batch-size'], '--batch-size');
    const limit = toPositiveInt(values.limit, '--limit');
    const body: RerunBody = {
      ...(status ? { status } : {}),
      ...(values['failure-code'] ? { failure_code: values['failure-code'] } : {}),
      ...(values.since ? { since: Date.now() - toDurationMs(values.since, '--since') } : {}),
      ...(values.session ? { session_id: values.session } : {}),
      ...(values['dry-run'] ? { dry_run: true } : {}),
      ...(batch ? { batch_size: batch } : {}),
      ...(limit ? { limit } : {}),
      ...(values['repeat-effects'] === undefined ? {} : { repeat_effects: repeatEffects(values['repeat-effects']) }),
    };
    const backend = await open(values, { drive: true });
    const report = await backend.rerun(body);
    // In process, each new fork runs here until it ends or waits for a person.
    const ended = new Map<string, string>();
    if (backend.inProcess) {
      for (const entry of report.reruns) {
        if (entry.created && entry.run_id) ended.set(entry.run_id, (await backend.settle(entry.run_id)).status);
      }
    }
    if (values.json) io.stdout.write(`${JSON.stringify(report)}\n`);
    else printReport(report, ended, io);
    // A fork that failed again (or could not be made) is a rerun that did not work.
    return report.failed.length > 0 || [...ended.values()].includes('failed') ? EXIT.failed : EXIT.ok;
  },
});

function printReport(report: RerunReportJson, ended: Map<string, string>, io: CliIo): void {
  for (const entry of report.reruns) {
    const what = entry.run_id === null ? 'would fork' : entry.created ? 'forked' : 'rerun before';
    const status = entry.run_id && ended.has(entry.run_id) ? ` (${ended.get(entry.run_id)!})` : '';
    io.stdout.write(
      `${entry.source_run_id} at step ${entry.at_step}: ${what}${entry.run_id ? ` ${entry.run_id}` : ''}${status}\n`,
    );
  }
  for (const entry of report.failed) {
    io.stdout.write(
      terminalText(
        `${entry.source_run_id} at step ${entry.at_step}: not forked: ${entry.failure.code}: ${entry.failure.message}\n`,
      ),
    );
  }
  const verb = report.dry_run ? 'would fork' : 'forked';
  io.stdout.write(
    `${report.matched} run(s) matched: ${report.dry_run ? report.matched - report.existing : report.created} ${verb}, ${report.existing} rerun before, ${report.failed.length} not forked\n`,
  );
}
