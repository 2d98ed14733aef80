/** `baton show <run>`: a run with its steps and tool calls. */
import { defineCommand } from './define-command.js';
import { EXIT, EXIT_HELP } from './exit-codes.js';
import { toRunDetails, toStepLines, toToolCallLines } from './format-run.js';
import { TARGET_HELP, TARGET_OPTIONS, takePositionals, HELP_FLAG } from './parse-flags.js';

/** The usage text of `baton show`. */
export const SHOW_USAGE = `Usage: baton show <run> [--json]
                  [--url <url> [--token <token>] | --db <file>|<postgres-url>]

Shows a run: its status, input, answer and usage, its planner steps, and its tool calls.

Options:
${TARGET_HELP}
${HELP_FLAG}

With --json, prints one object: { "run": {...}, "steps": [...], "tool_calls": [...] }.

${EXIT_HELP}
`;

/** Runs `baton show`; resolves with the exit code. */
export const runShowCommand = defineCommand({
  name: 'show',
  usage: SHOW_USAGE,
  options: TARGET_OPTIONS,
  async run({ values, positionals }, { io, open }) {
    const [runId] = takePositionals(positionals, { required: ['run'] });
    const backend = await open(values, { drive: false });
    const run = await backend.get(runId!);
    const [steps, toolCalls] = await Promise.all([backend.steps(run.id), backend.toolCalls(run.id)]);
    if (values.json) {
      io.stdout.write(`${JSON.stringify({ run, steps, tool_calls: toolCalls })}\n`);
    } else {
      io.stdout.write(`${toRunDetails(run)}\n${toStepLines(steps)}\n${toToolCallLines(toolCalls)}`);
    }
    return EXIT.ok;
  },
});
