/**
 * `baton answer`, `baton extend` and `baton end`: a person's answer to a run's question, and the
 * two ways out of a budget that ran out (more of it, or the end of the run). Each decides the
 * run's pending wait by default, or the one named, and reports as `baton approve` does.
 */
import { answerFromText } from './answer-text.js';
import type { ExtendLimits } from './backend.js';
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { DECISION_HELP, reportDecision, waitIdOf } from './decision-report.js';
import { toDurationMs } from './duration.js';
import { EXIT_HELP } from './exit-codes.js';
import {
  AGENT_HELP,
  AGENT_OPTIONS,
  HELP_FLAG,
  TARGET_HELP,
  TARGET_OPTIONS,
  takePositionals,
  toCount,
  toJsonValue,
} from './parse-flags.js';

const TARGET_USAGE = `[--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]`;

/** The usage text of `baton answer`. */
export const ANSWER_USAGE = `Usage: baton answer <run> [<input>] <text> [--reason <text>] [--json]
       baton answer <run> [<input>] --json <json> [--reason <text>]
       baton answer <run> [<input>] --value <json> [--reason <text>] [--json]
                    ${TARGET_USAGE}

Answers the question a run waits on (wait reason input; by default its pending one, or
<input>). The answer is checked against the question: one of its choices, or what its JSON
Schema asks for; an answer that does not fit is refused and changes nothing. The model goes on
with the answer, recorded as given by you.

Options:
  --value <json>    the answer as JSON (a number, a list, an object, "text")
  --reason <text>   recorded with the answer
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

<text> answers as text; for a question whose schema asks for something else than a string
(a number, an object), <text> is read as JSON when it is JSON ('3', '{"copies":3}'). With
--json, an answer that is JSON is read as JSON whatever the question ('"text"', '{"copies":3}'),
and the output is one JSON object.
${DECISION_HELP}

${EXIT_HELP}
`;

/** `baton answer <run> --json <json>`: the answer read as JSON when it is JSON, else the text. */
function answerFromJsonFlag(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Runs `baton answer`; resolves with the exit code. */
export const runAnswerCommand = defineCommand({
  name: 'answer',
  usage: ANSWER_USAGE,
  options: { ...TARGET_OPTIONS, ...AGENT_OPTIONS, value: { type: 'string' }, reason: { type: 'string' } },
  async run({ values, positionals }, { io, open }) {
    const given =
      values.value === undefined
        ? takePositionals(positionals, { required: ['run', 'text'], optional: ['input'] })
        : takePositionals(positionals, { required: ['run'], optional: ['input'] });
    const [runId] = given;
    const inputGiven = values.value === undefined ? (given.length === 3 ? given[1] : undefined) : given[1];
    const text = values.value === undefined ? given.at(-1)! : undefined;
    const json = values.value === undefined ? undefined : toJsonValue(values.value, '--value');
    const backend = await open(values, { drive: true, runId });
    const inputId = await waitIdOf(backend, runId!, inputGiven, 'input');
    let answer = json;
    if (text !== undefined) {
      const run = await backend.get(runId!);
      answer = values.json
        ? answerFromJsonFlag(text)
        : answerFromText(text, run.pending_input?.id === inputId ? run.pending_input : null);
    }
    const approval = await backend.answer(runId!, inputId, {
      answer,
      ...(values.reason === undefined ? {} : { reason: values.reason }),
    });
    return reportDecision(backend, runId!, approval, io, { done: 'answered', endsRun: false, json: values.json });
  },
});

/** The usage text of `baton extend`. */
export const EXTEND_USAGE = `Usage: baton extend <run> [<approval>] [--max-llm-calls N] [--max-tool-calls N]
                    [--max-tokens N] [--max-cost-usd X] [--max-steps N] [--timeout <duration>]
                    [--reason <text>] [--json] ${TARGET_USAGE}

Goes on with a run that waits because a budget ran out (wait reason budget: a run started with
on_budget_exceeded 'ask'), with new limits. Each limit is the new total, not an increment, and
none may be lower than what the run has used; the one that ran out must be raised past it.

Options:
  --max-llm-calls N   model calls in all
  --max-tool-calls N  tool calls in all
  --max-tokens N      tokens in all
  --max-cost-usd X    spend on model calls in all, in US dollars
  --max-steps N       planner steps in all
  --timeout <d>       a new deadline this long from now (30m, 2h, 1d)
  --reason <text>     recorded with the decision
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

${DECISION_HELP}

${EXIT_HELP}
`;

function toCost(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const cost = /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(cost)) throw usageError(`--max-cost-usd must be a number of 0 or more, not '${value}'`);
  return cost;
}

/** Runs `baton extend`; resolves with the exit code. */
export const runExtendCommand = defineCommand({
  name: 'extend',
  usage: EXTEND_USAGE,
  options: {
    ...TARGET_OPTIONS,
    ...AGENT_OPTIONS,
    'max-llm-calls': { type: 'string' },
    'max-tool-calls': { type: 'string' },
    'max-tokens': { type: 'string' },
    'max-cost-usd': { type: 'string' },
    'max-steps': { type: 'string' },
    timeout: { type: 'string' },
    reason: { type: 'string' },
  },
  async run({ values, positionals }, { io, open }) {
    const [runId, given] = takePositionals(positionals, { required: ['run'], optional: ['approval'] });
    const timeout = values.timeout === undefined ? undefined : toDurationMs(values.timeout, '--timeout');
    if (timeout === 0) throw usageError('--timeout must be longer than 0');
    const limits: ExtendLimits = Object.fromEntries(
      Object.entries({
        max_llm_calls: toCount(values['max-llm-calls'], '--max-llm-calls'),
        max_tool_calls: toCount(values['max-tool-calls'], '--max-tool-calls'),
        max_tokens: toCount(values['max-tokens'], '--max-tokens'),
        max_cost_usd: toCost(values['max-cost-usd']),
        max_steps: toCount(values['max-steps'], '--max-steps'),
        timeout_ms: timeout,
      }).filter(([, v]) => v !== undefined),
    );
    if (Object.keys(limits).length === 0) {
      throw usageError(
        'name at least one limit: --max-llm-calls, --max-tool-calls, --max-tokens, --max-cost-usd, --max-steps or --timeout',
      );
    }
    const backend = await open(values, { drive: true, runId });
    const approvalId = await waitIdOf(backend, runId!, given, 'approval');
    const approval = await backend.decide(runId!, approvalId, {
      decision: 'extend',
      limits,
      ...(values.reason === undefined ? {} : { reason: values.reason }),
    });
    return reportDecision(backend, runId!, approval, io, { done: 'extended', endsRun: false, json: values.json });
  },
});

/** The usage text of `baton end`. */
export const END_USAGE = `Usage: baton end <run> [<approval>] [--reason <text>] [--json]
                 ${TARGET_USAGE}

Ends a run that waits because a budget ran out (wait reason budget): it fails with that
budget's stop reason (budget_exceeded, max_steps or timeout), as it would have without
on_budget_exceeded 'ask'. Exits 0: the run failed as asked.

Options:
  --reason <text>   recorded with the decision
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

${DECISION_HELP}

${EXIT_HELP}
`;

/** Runs `baton end`; resolves with the exit code. */
export const runEndCommand = defineCommand({
  name: 'end',
  usage: END_USAGE,
  options: { ...TARGET_OPTIONS, ...AGENT_OPTIONS, reason: { type: 'string' } },
  async run({ values, positionals }, { io, open }) {
    const [runId, given] = takePositionals(positionals, { required: ['run'], optional: ['approval'] });
    const backend = await open(values, { drive: true, runId });
    const approvalId = await waitIdOf(backend, runId!, given, 'approval');
    const approval = await backend.decide(runId!, approvalId, {
      decision: 'end',
      ...(values.reason === undefined ? {} : { reason: values.reason }),
    });
    return reportDecision(backend, runId!, approval, io, { done: 'ended', endsRun: true, json: values.json });
  },
});
