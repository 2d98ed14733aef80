/** `baton artifact <run> <sha256>` and `baton export <run>`: what a run produced, and the whole run. */
import { writeFileSync } from 'node:fs';
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { HELP_FLAG, TARGET_HELP, TARGET_OPTIONS, takePositionals } from './parse-flags.js';

/** The usage text of `baton artifact`. */
export const ARTIFACT_USAGE = `Usage: baton artifact <run> [sha256:]<hex> [--out <file>] [--json]
                      [--url <url> [--token <token>] | --db <file>|<postgres-url>]

Writes an artifact a run stored (a tool output too large for the model's context) to stdout,
or to a file with --out. The run's artifacts are listed in 'baton export <run>'.

Options:
  --out <file>      write the bytes to this file instead of stdout
${TARGET_HELP}
${HELP_FLAG}

With --json (and --out), prints { "sha256", "size", "media_type", "path" } once written.

${EXIT_HELP}
`;

/** The usage text of `baton export`. */
export const EXPORT_USAGE = `Usage: baton export <run> [--out <file>]
                    [--url <url> [--token <token>] | --db <file>|<postgres-url>]

Prints the whole run as one JSON document: the run, its events, steps, tool calls, approvals,
trace, and references to its artifacts (the inspector's export).

Options:
  --out <file>      write the document to this file instead of stdout
${TARGET_HELP}
${HELP_FLAG}

${EXIT_HELP}
`;

const OPTIONS = { ...TARGET_OPTIONS, out: { type: 'string' } } as const;

/** Runs `baton artifact`; resolves with the exit code. */
export const runArtifactCommand = defineCommand({
  name: 'artifact',
  usage: ARTIFACT_USAGE,
  options: OPTIONS,
  async run({ values, positionals }, { io, open }) {
    const [runId, given] = takePositionals(positionals, { required: ['run', 'sha256'] });
    // As the event log and `baton events` print it (`sha256:<hex>`), or the bare hex.
    const sha256 = given!.replace(/^sha256:/i, '');
    const backend = await open(values, { drive: false });
    const artifact = await backend.artifact(runId!, sha256);
    if (!values.out) {
      io.stdout.write(artifact.content);
      return EXIT.ok;
    }
    writeFileSync(values.out, artifact.content);
    const summary = { sha256, size: artifact.content.length, media_type: artifact.mediaType, path: values.out };
    io.stdout.write(
      values.json
        ? `${JSON.stringify(summary)}\n`
        : `Wrote ${summary.size} bytes (${summary.media_type}) to ${values.out}\n`,
    );
    return EXIT.ok;
  },
});

/** Runs `baton export`; resolves with the exit code. */
export const runExportCommand = defineCommand({
  name: 'export',
  usage: EXPORT_USAGE,
  options: OPTIONS,
  async run({ values, positionals }, { io, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const backend = await open(values, { drive: false });
    const document = `${JSON.stringify(await backend.exportRun(runId!), null, 2)}\n`;
    if (values.out) writeFileSync(values.out, document);
    else io.stdout.write(document);
    return EXIT.ok;
  },
});
