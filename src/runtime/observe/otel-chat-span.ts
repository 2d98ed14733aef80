/** The planner's `chat` span: from the run entering planning to the step it decided. */
import { SpanKind } from '@opentelemetry/api';
import { baseAttributes, writeChildSpan, type EventHandler } from './otel-spans.js';

/** `step`: one planner call, a CLIENT span with its model, token usage and how it finished. */
export const onStep: EventHandler = (deps, runId, run, event, emit) => {
  const data = event.data;
  const usage = (data.usage ?? {}) as Record<string, number>;
  const decision = (data.decision ?? {}) as Record<string, unknown>;
  const model = typeof data.model === 'string' ? data.model : typeof usage.model === 'string' ? usage.model : 'planner';
  if (emit) {
    writeChildSpan(
      deps,
      runId,
      `chat ${model}`,
      run.planningSince ?? event.createdAt,
      event.createdAt,
      {
        ...baseAttributes(runId, run),
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': typeof data.provider === 'string' ? data.provider : 'baton',
        'gen_ai.request.model': model,
        'gen_ai.usage.input_tokens': Number(usage.input_tokens ?? 0),
        'gen_ai.usage.output_tokens': Number(usage.output_tokens ?? 0),
        'gen_ai.response.finish_reasons': [decision.type === 'final' ? 'stop' : String(decision.type ?? 'unknown')],
        'baton.step': Number(data.step_index ?? 0),
        // The agent that planned the step: the run's own, or one its conversation was handed to.
        ...(typeof data.agent === 'string' ? { 'gen_ai.agent.name': data.agent } : {}),
        ...(deps.content ? { 'baton.decision': deps.content(decision) } : {}),
      },
      undefined,
      SpanKind.CLIENT,
    );
  }
  run.planningSince = null;
};
