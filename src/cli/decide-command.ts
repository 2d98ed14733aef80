/**
 * `baton approve` and `baton reject`: decide a run's approval (by default, its pending one);
 * `approve --edit` runs the call with a person's arguments, `approve --respond` gives its result
 * instead of running it.
 */
import type { DecisionBody } from './backend.js';
import { usageError } from './cli-error.js';
import { defineCommand } from './define-command.js';
import { DECISION_HELP, reportDecision, waitIdOf } from './decision-report.js';
import { EXIT_HELP } from './exit-codes.js';
import {
  AGENT_HELP,
  AGENT_OPTIONS,
  TARGET_HELP,
  TARGET_OPTIONS,
  takePositionals,
  HELP_FLAG,
  toJsonValue,
} from './parse-flags.js';

function usage(verb: 'approve' | 'reject'): string {
  const about =
    verb === 'approve'
      ? `Approves an approval of a run waiting for a human (by default its pending one, or
<approval>): the approved tool calls run, exactly those, once.`
      : `Rejects an approval of a run waiting for a human (by default its pending one, or
<approval>): the calls do not run, the model is told, and the run goes on.`;
  const flag =
    verb === 'approve'
      ? ` [--resolution retry|done]
                   [--edit <json> | --respond <json>] [--call <tool_call_id>]`
      : ' [--terminate [--compensate]]';
  const option =
    verb === 'approve'
      ? `  --resolution <r>  for an interrupted unsafe call (wait reason uncertain_side_effect):
                    'retry' runs it again (the default), 'done' records that it happened
  --edit <json>     run the call with these arguments instead of the model's (checked by
                    the tool's schema; the model's are kept in the ledger as edited.proposed_args)
  --respond <json>  do not run the call: this is its result (checked by the tool's output
                    schema); the step's other calls run
  --call <id>       with --edit or --respond: the tool call it is about (needed when the
                    approval binds more than one)`
      : `  --terminate       end the run failed (stop reason 'rejected') instead of telling the model
  --compensate      with --terminate: first undo the run's completed calls that have a
                    compensator, newest first`;
  return `Usage: baton ${verb} <run> [<approval>] [--reason <text>]${flag} [--json]
                   [--url <url> [--token <token>] | --db <file>|<postgres-url> [--agent <agent>]]

${about}

Options:
  --reason <text>   recorded with the decision
${option}
${TARGET_HELP}
${AGENT_HELP}
${HELP_FLAG}

${DECISION_HELP}

${EXIT_HELP}
`;
}

/** The decision the flags of `verb` ask for; a usage error for flags that do not go together. */
function decisionOf(
  verb: 'approve' | 'reject',
  values: {
    reason?: string | undefined;
    resolution?: string | undefined;
    terminate: boolean;
    compensate: boolean;
    edit?: string | undefined;
    respond?: string | undefined;
    call?: string | undefined;
  },
): DecisionBody {
  const { resolution, terminate, compensate, edit, respond, call } = values;
  if (compensate && !terminate) throw usageError('--compensate goes with reject --terminate');
  if (verb === 'reject' && resolution !== undefined) throw usageError('--resolution goes with approve');
  if (verb === 'approve' && terminate) throw usageError('--terminate goes with reject');
  if (verb === 'reject' && (edit !== undefined || respond !== undefined)) {
    throw usageError(`--${edit !== undefined ? 'edit' : 'respond'} goes with approve`);
  }
  if (edit !== undefined && respond !== undefined) throw usageError('--edit and --respond cannot be used together');
  if (resolution !== undefined && (edit !== undefined || respond !== undefined)) {
    throw usageError(`--resolution and --${edit !== undefined ? 'edit' : 'respond'} cannot be used together`);
  }
  if (call !== undefined && edit === undefined && respond === undefined) {
    throw usageError('--call goes with --edit or --respond');
  }
  if (resolution !== undefined && resolution !== 'retry' && resolution !== 'done') {
    throw usageError(`--resolution must be retry or done, not '${resolution}'`);
  }
  const reason = values.reason === undefined ? {} : { reason: values.reason };
  const toolCall = call === undefined ? {} : { tool_call_id: call };
  if (edit !== undefined) return { decision: 'edit', args: toJsonValue(edit, '--edit'), ...toolCall, ...reason };
  if (respond !== undefined) {
    return { decision: 'respond', output: toJsonValue(respond, '--respond'), ...toolCall, ...reason };
  }
  return {
    decision: verb,
    ...reason,
    ...(resolution === undefined ? {} : { resolution: resolution as 'retry' | 'done' }),
    ...(terminate ? { terminate } : {}),
    ...(compensate ? { compensate } : {}),
  };
}

function defineDecide(verb: 'approve' | 'reject') {
  return defineCommand({
    name: verb,
    usage: usage(verb),
    options: {
      ...TARGET_OPTIONS,
      ...AGENT_OPTIONS,
      reason: { type: 'string' },
      resolution: { type: 'string' },
      terminate: { type: 'boolean', default: false },
      compensate: { type: 'boolean', default: false },
      edit: { type: 'string' },
      respond: { type: 'string' },
      call: { type: 'string' },
    },
    async run({ values, positionals }, { io, open }) {
      const [runId, given] = takePositionals(positionals, { required: ['run'], optional: ['approval'] });
      const body = decisionOf(verb, values);
      const backend = await open(values, { drive: true, runId });
      const approvalId = await waitIdOf(backend, runId!, given, 'approval');
      const approval = await backend.decide(runId!, approvalId, body);
      // A rejection with --terminate ends the run failed, which is what was asked.
      return reportDecision(backend, runId!, approval, io, {
        done: verb === 'approve' ? 'approved' : 'rejected',
        endsRun: body.terminate === true,
        json: values.json,
      });
    },
  });
}

/** Runs `baton approve`; resolves with the exit code. */
export const runApproveCommand = defineDecide('approve');
/** Runs `baton reject`; resolves with the exit code. */
export const runRejectCommand = defineDecide('reject');
/** The usage texts of `baton approve` and `baton reject`. */
export const APPROVE_USAGE = usage('approve');
export const REJECT_USAGE = usage('reject');
