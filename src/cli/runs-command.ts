/** `baton runs`: the newest runs, optionally of one status. */
import { LISTED_STATUSES } from '../index.js';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { toRunsTable } from './format-run.js';
import { toStatus } from './open-backend.js';
import { usageError } from './cli-error.js';
import {
  TARGET_HELP,
  TARGET_OPTIONS,
  takePositionals,
  toMetadata,
  toPositiveInt,
  toTags,
  HELP_FLAG,
} from './parse-flags.js';
import { toDurationMs } from './duration.js';

/** The most runs one page holds (the server's limit too). */
const MAX_LIMIT = 200;

/** The usage text of `baton runs`. */
export const RUNS_USAGE = `Usage: baton runs [--status <status>] [--limit <n>] [--forked-from <run>] [--parent <run>] [--json]
                  [--metadata <key>=<value>]... [--tag <tag>]... [--failure-code <code>] [--since <duration>]
                  [--url <url> [--token <token>] | --db <file>|<postgres-url>]

Lists runs, newest first.

Options:
  --status <status>  only runs in this state: ${LISTED_STATUSES.join(', ')}
  --limit <n>        at most n runs, 1-200 (default 20)
  --forked-from <run>  only the forks of that run
  --parent <run>     only the child runs that run's agent tools started
  --metadata <k>=<v>  only runs started with this metadata entry (values compared as text);
                    repeatable: runs with every one
  --tag <tag>        only runs with this tag; repeatable: runs with every one
  --failure-code <code>  only runs whose failure has this code (e.g. tool.failed)
  --since <duration>  only runs created in the last <duration> (30m, 12h, 7d)
${TARGET_HELP}
${HELP_FLAG}

With --json, prints one object: { "runs": [...], "next_cursor": ... }.

${EXIT_HELP}
`;

/** Runs `baton runs`; resolves with the exit code. */
export const runRunsCommand = defineCommand({
  name: 'runs',
  usage: RUNS_USAGE,
  options: {
    ...TARGET_OPTIONS,
    status: { type: 'string' },
    limit: { type: 'string' },
    'forked-from': { type: 'string' },
    parent: { type: 'string' },
    metadata: { type: 'string', multiple: true },
    tag: { type: 'string', multiple: true },
    'failure-code': { type: 'string' },
    since: { type: 'string' },
  },
  async run({ values, positionals }, { io, open }) {
    takePositionals(positionals, { required: [] });
    const status = toStatus(values.status, LISTED_STATUSES);
    const limit = toPositiveInt(values.limit, '--limit') ?? 20;
    // The server's limit too: the same flags mean the same thing in process and with --url.
    if (limit > MAX_LIMIT) throw usageError(`--limit must be at most ${MAX_LIMIT}, not ${limit}`);
    const since = values.since === undefined ? undefined : Date.now() - toDurationMs(values.since, '--since');
    if (since !== undefined && since < 0) throw usageError(`--since ${values.since} reaches before 1970`);
    const backend = await open(values, { drive: false });
    const forkedFrom = values['forked-from'];
    if (forkedFrom === '') throw usageError('--forked-from needs a run id');
    const parentRunId = values.parent;
    if (parentRunId === '') throw usageError('--parent needs a run id');
    const page = await backend.list({
      status,
      limit,
      ...(forkedFrom ? { forkedFrom } : {}),
      ...(parentRunId ? { parentRunId } : {}),
      ...(values.metadata ? { metadata: toMetadata(values.metadata) } : {}),
      ...(values.tag ? { tags: toTags(values.tag)! } : {}),
      ...(values['failure-code'] ? { failureCode: values['failure-code'] } : {}),
      ...(since !== undefined ? { createdAfter: since } : {}),
    });
    io.stdout.write(values.json ? `${JSON.stringify(page)}\n` : toRunsTable(page.runs));
    return EXIT.ok;
  },
});
