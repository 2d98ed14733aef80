/**
 * The SSE helper every stream goes through. It writes frames (`event:`, `id:`, `data:` JSON),
 * keeps idle connections alive with `: ping` comments, and whenever a stream ends for any reason
 * but its natural end (an error, a lagging client, the server closing) it writes an
 * `event: error` frame with `{ "error": failure }` before closing. The tenant's slot is given
 * back however the stream ends.
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { httpError, toApiError, type ApiFailure } from '../http-error.js';
import type { StreamSlots } from './stream-slots.js';

/** What a stream's body writes with. */
export interface SseWriter {
  /** Aborted when the client goes away or the server closes. */
  signal: AbortSignal;
  /** Writes one frame; without `id` the frame has no `id:` line (drafts, the global stream). */
  frame(frame: { event: string; data: unknown; id?: number }): Promise<void>;
}

/** Options of one stream. */
export interface SseOptions {
  slots: StreamSlots;
  /** Gives back the tenant's slot (already taken by the caller, so an over-limit request answers 429 JSON). */
  release: () => void;
  heartbeatMs: number;
  onError?: (error: unknown) => void;
}

function isFailure(reason: unknown): reason is ApiFailure {
  return typeof reason === 'object' && reason !== null && 'code' in reason && 'kind' in reason;
}

/** Answers with an SSE stream whose frames `body` writes; the stream closes when `body` returns. */
export function openSse(c: Context, options: SseOptions, body: (sse: SseWriter) => Promise<void>): Response {
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const controller = new AbortController();
    stream.onAbort(() => controller.abort('client closed the stream'));
    const untrack = options.slots.track(() =>
      controller.abort(
        httpError('server.closing', 'The server is shutting down; reconnect with Last-Event-ID').failure,
      ),
    );
    const heartbeat = setInterval(() => void stream.write(': ping\n\n'), options.heartbeatMs);
    let failure: ApiFailure | undefined;
    try {
      // A first comment flushes the headers, so the client knows the stream is open.
      await stream.write(': open\n\n');
      await body({
        signal: controller.signal,
        async frame({ event, data, id }) {
          await stream.writeSSE({ event, data: JSON.stringify(data), ...(id === undefined ? {} : { id: String(id) }) });
        },
      });
      if (isFailure(controller.signal.reason)) failure = controller.signal.reason;
    } catch (error) {
      failure = toApiError(error).failure;
      if (failure.code === 'internal.error') options.onError?.(error);
    } finally {
      clearInterval(heartbeat);
      untrack();
      options.release();
    }
    if (failure && !stream.aborted) await stream.writeSSE({ event: 'error', data: JSON.stringify({ error: failure }) });
  });
}
