/**
 * A run's events over SSE, resilient to dropped connections: it reconnects with `Last-Event-ID`
 * set to the last `seq` it yielded, so no event is missed or repeated, and ends after the run's
 * terminal event. Drafts (no `id:`) pass through live.
 */
import { sleep } from './abortable.js';
import { isTerminalEvent } from '../../machines/run-status.js';
import type { EventJson } from './api-json.js';
import { CliError } from './cli-error.js';
import type { HttpClient } from './http-client.js';
import { readSse } from './read-sse.js';

/** How a stream is read. */
export interface StreamOptions {
  after?: number | undefined;
  /** Without follow, the stream is read until it has been quiet for `idleMs`: the events committed so far. */
  follow: boolean;
  signal?: AbortSignal | undefined;
  /** Quiet time that ends a stream read without `follow` (default 400 ms). */
  idleMs?: number;
  /** How long to keep trying to reconnect before giving up (default 30 s). */
  reconnectMs?: number;
}

// Server-side endings that say "come back": the server is restarting, or this client lagged.
const RECONNECT_CODES: ReadonlySet<string> = new Set(['server.closing', 'stream.lagging']);

function isRetryable(error: unknown): boolean {
  if (!(error instanceof CliError)) return true; // a connection dropped mid-read
  const { code, status } = error.failure;
  return code === 'server.unreachable' || RECONNECT_CODES.has(code) || status === 429 || (status ?? 0) >= 500;
}

function isAbort(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'AbortError';
}

/** Yields the events of run `runId` from the server, reconnecting as needed. */
export async function* streamRunEvents(
  client: HttpClient,
  runId: string,
  options: StreamOptions,
): AsyncGenerator<EventJson> {
  const { signal } = options;
  const idleMs = options.idleMs ?? 400;
  const reconnectMs = options.reconnectMs ?? 30_000;
  const path = `/v1/runs/${encodeURIComponent(runId)}/events`;
  let last = options.after ?? 0;
  let failingSince: number | undefined;
  let delay = 200;

  while (!signal?.aborted) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal?.addEventListener('abort', stop, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const quiet = () => {
      if (options.follow) return;
      clearTimeout(idle);
      idle = setTimeout(stop, idleMs);
    };
    try {
      const response = await client.stream(path, { lastEventId: last, signal: connection.signal });
      failingSince = undefined;
      delay = 200;
      // 204: the run has ended and nothing after `last` is left.
      if (response.status === 204 || !response.body) return;
      quiet();
      for await (const message of readSse(response.body)) {
        quiet();
        if (message.event === 'error') {
          const { error } = JSON.parse(message.data) as { error: { code: string; message: string } };
          throw new CliError({ code: error.code, message: error.message });
        }
        const event = JSON.parse(message.data) as EventJson;
        if (event.type === 'draft') {
          if (options.follow) yield event;
          continue;
        }
        if (event.seq <= last) continue;
        yield event;
        last = event.seq;
        if (isTerminalEvent(event)) return;
      }
      // The stream ended without the terminal event (e.g. the server restarted): reconnect.
      if (!options.follow) return;
    } catch (error) {
      if (signal?.aborted) return;
      if (isAbort(error) && !options.follow) return; // quiet for idleMs: all committed events are out
      if (!isRetryable(error)) throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > reconnectMs) throw error;
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener('abort', stop);
      connection.abort();
    }
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 2_000);
  }
}
