/** `baton events <run>`: a run's event log, and with `--follow` its live events until it ends. */
import { defineCommand } from './define-command.js';
import { createEventPrinter } from './event-printer.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { TARGET_HELP, TARGET_OPTIONS, takePositionals, toPositiveInt, HELP_FLAG } from './parse-flags.js';
import { toRunExitCode } from './summarize-run.js';

/** The usage text of `baton events`. */
export const EVENTS_USAGE = `Usage: baton events <run> [--follow] [--after <seq>] [--json]
                    [--url <url> [--token <token>] | --db <file>|<postgres-url>]

Prints a run's events, one line each, numbered by seq: the events committed so far, or with
--follow, then every new one (and the model's text as it streams) until the run ends.

Options:
  -f, --follow      keep printing new events until the run succeeds or fails
  --after <seq>     start after this event
${TARGET_HELP}
${HELP_FLAG}

With --json, prints one JSON object per line, as the API's event stream carries them.
With --url and --follow, a dropped connection is resumed with Last-Event-ID (no event is
missed or repeated).

${EXIT_HELP}
`;

/** Runs `baton events`; resolves with the exit code. */
export const runEventsCommand = defineCommand({
  name: 'events',
  usage: EVENTS_USAGE,
  options: {
    ...TARGET_OPTIONS,
    follow: { type: 'boolean', short: 'f', default: false },
    after: { type: 'string' },
  },
  async run({ values, positionals }, { io, signal, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const after = values.after === '0' ? 0 : toPositiveInt(values.after, '--after');
    const backend = await open(values, { drive: false });
    // Not found answers before any stream opens.
    const run = await backend.get(runId!);
    const printer = createEventPrinter(io, values.json);
    for await (const event of backend.events(run.id, { after, follow: values.follow, signal })) printer.print(event);
    printer.breakLine();
    if (signal.aborted) return EXIT.interrupted;
    return values.follow ? toRunExitCode(await backend.get(run.id)) : EXIT.ok;
  },
});
