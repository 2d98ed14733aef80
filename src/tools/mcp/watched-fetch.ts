/**
 * The fetch of an MCP connection over Streamable HTTP, which notices a connection that breaks
 * under a request, and the test for a request that never reached a server at all.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The request never reached a server: it was refused before anything was sent. */
export function neverDelivered(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'EACCES') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

// Statuses whose response cannot carry a body (the Response constructor refuses one).
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * `fetch`, with every POST watched: when it fails after the request may have reached the server
 * (the socket closed before the answer, or while its body was read), `onBroken` is told. The SDK
 * only reports a broken SSE stream to `onerror`, and leaves the request waiting for an answer
 * that cannot come.
 */
export function watchedFetch(onBroken: (error: unknown) => void): FetchLike {
  return async (url, init) => {
    if (init?.method !== 'POST') return fetch(url, init);
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      if (!neverDelivered(error) && !init.signal?.aborted) onBroken(error);
      throw error;
    }
    if (!response.body || NULL_BODY.has(response.status)) return response;
    const reader = response.body.getReader();
    // Cancelled by its reader (the SDK drops a body it does not need): not a broken connection.
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (cancelled) return;
          onBroken(error);
          controller.error(error);
          return;
        }
        if (cancelled) return;
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel: (reason) => {
        cancelled = true;
        return reader.cancel(reason);
      },
    });
    const { status, statusText, headers } = response;
    return new Response(body, { status, statusText, headers });
  };
}
