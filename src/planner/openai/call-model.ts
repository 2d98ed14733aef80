/** One request to the model: streamed or not, aborted by the run's signal or by the idle timeout. */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { classifyError, type RequestError } from './classify-error.js';
import { fromCompletion, type ModelOutput } from './model-output.js';
import { readStream } from './read-stream.js';

/** The body of a request, without the streaming fields the call adds. */
export type RequestBody = Omit<ChatCompletionCreateParamsNonStreaming, 'stream' | 'stream_options'>;

/** Everything one request needs. */
export interface CallInput {
  client: OpenAI;
  body: RequestBody;
  stream: boolean;
  signal: AbortSignal;
  /** Idle limit: until the response starts, then between two stream chunks. */
  timeoutMs: number;
  onDraft?: ((text: string) => void) | undefined;
}

/** The model's output, or the classified reason the request failed. */
export type CallResult = { ok: true; output: ModelOutput } | { ok: false; error: RequestError };

/** Makes one request; never throws, never retries. */
export async function callModel(input: CallInput): Promise<CallResult> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(input.signal.reason);
  input.signal.addEventListener('abort', onAbort, { once: true });
  // An idle timer rather than a total one: a long answer that keeps streaming is not cut.
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, input.timeoutMs);
  const options = { signal: controller.signal, maxRetries: 0 };
  try {
    if (input.signal.aborted) return { ok: false, error: { type: 'aborted' } };
    let output: ModelOutput;
    if (input.stream) {
      const stream = await input.client.chat.completions.create(
        { ...input.body, stream: true, stream_options: { include_usage: true } },
        options,
      );
      output = await readStream(stream, { onChunk: () => timer.refresh(), onDraft: input.onDraft });
    } else {
      output = fromCompletion(await input.client.chat.completions.create({ ...input.body, stream: false }, options));
    }
    // An aborted stream ends quietly, as if it were complete: the flags say what happened.
    if (input.signal.aborted) return { ok: false, error: { type: 'aborted' } };
    if (timedOut) return { ok: false, error: timeoutError(input.timeoutMs) };
    if (output.finishReason === null) {
      return { ok: false, error: { type: 'transient', message: 'The stream ended before the model finished' } };
    }
    return { ok: true, output };
  } catch (error) {
    if (input.signal.aborted) return { ok: false, error: { type: 'aborted' } };
    if (timedOut) return { ok: false, error: timeoutError(input.timeoutMs) };
    return { ok: false, error: classifyError(error) };
  } finally {
    clearTimeout(timer);
    input.signal.removeEventListener('abort', onAbort);
  }
}

function timeoutError(timeoutMs: number): RequestError {
  return { type: 'transient', message: `The model sent nothing for ${timeoutMs} ms` };
}
