/**
 * MCP's multi round-trip requests (2026-07-28 spec, SEP-2322): a server that needs a person's
 * input answers `tools/call` with `resultType: "input_required"`, its questions in
 * `inputRequests` (keyed, each an `elicitation/create` request) and an opaque `requestState`;
 * the client calls the tool again with `inputResponses` under the same keys and the state echoed.
 * Nothing runs on the server between the rounds, so Baton stops the call there
 * (`ToolInputRequired`): the run waits for the answer holding nothing, across restarts, and the
 * call is sent again with it, once.
 */
import { ToolFailedError, type ToolInput, type ToolQuestion } from '../define-tool.js';

/** How many times in a row a server may answer with only a state to echo (no question). */
export const MAX_IMMEDIATE_ROUNDS = 10;

/** What Baton keeps of a round between the question and the answer (the stopped call's state). */
interface RoundState {
  /** The keys of the server's questions, in order; `single`: the answer is the one form's content. */
  keys: string[];
  single: boolean;
  request_state: string | null;
}

/** What an `input_required` result asks: a question for a person, or only to call again. */
export type InputRequired =
  { kind: 'ask'; question: ToolQuestion; state: RoundState } | { kind: 'again'; requestState: string };

interface ElicitationRequest {
  method?: unknown;
  params?: { mode?: unknown; message?: unknown; requestedSchema?: unknown };
}

/** The result's questions as one question for a person, or null for a complete result. */
export function inputRequiredOf(result: Record<string, unknown>, server: string, tool: string): InputRequired | null {
  if (result.resultType !== 'input_required') return null;
  const requestState = typeof result.requestState === 'string' ? result.requestState : null;
  const requests = Object.entries((result.inputRequests ?? {}) as Record<string, ElicitationRequest>);
  if (requests.length === 0) {
    if (requestState === null) {
      throw new ToolFailedError(`MCP server '${server}' answered '${tool}' with input_required and nothing to ask`);
    }
    return { kind: 'again', requestState };
  }
  for (const [key, request] of requests) {
    const mode = request.params?.mode ?? 'form';
    if (request.method !== 'elicitation/create' || mode !== 'form') {
      const what =
        request.method === 'elicitation/create' ? `${String(mode)}-mode elicitation` : String(request.method);
      throw new ToolFailedError(
        `MCP server '${server}' asked for ${what} ('${key}') to call '${tool}', which Baton does not offer`,
      );
    }
  }
  const forms = requests.map(([key, request]) => ({
    key,
    message: String(request.params?.message ?? ''),
    schema: (request.params?.requestedSchema ?? { type: 'object', properties: {} }) as Record<string, unknown>,
  }));
  const keys = forms.map((f) => f.key);
  const state: RoundState = { keys, single: forms.length === 1, request_state: requestState };
  const from = { server };
  if (forms.length === 1) {
    const [form] = forms;
    return { kind: 'ask', question: { question: form!.message, schema: form!.schema, from }, state };
  }
  // Several forms at once: one answer, an object with each form's content under its key.
  const question = forms.map((f) => `${f.key}: ${f.message}`).join('\n');
  const schema = {
    type: 'object',
    properties: Object.fromEntries(forms.map((f) => [f.key, f.schema])),
    required: keys,
  };
  return { kind: 'ask', question: { question, schema, from }, state };
}

/** The params of the call that carries a person's answer back (`inputResponses`, `requestState`). */
export function inputResponsesOf(input: ToolInput): Record<string, unknown> {
  const state = input.state as RoundState;
  const answer = input.answer as Record<string, unknown>;
  const content = (key: string) => (state.single ? answer : answer[key]);
  return {
    inputResponses: Object.fromEntries(state.keys.map((key) => [key, { action: 'accept', content: content(key) }])),
    ...(state.request_state !== null ? { requestState: state.request_state } : {}),
  };
}
