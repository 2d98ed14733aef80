/**
 * A small SSE client for tests over a streamed `fetch` body: it parses `event:`, `id:` and
 * `data:` frames (comments are counted, not returned), remembers the last `id:` the way
 * EventSource does, and reconnects with it as `Last-Event-ID`.
 */
import { scaled } from './limits.js';

/** One SSE frame. */
export interface SseFrame {
  event: string;
  /** Undefined when the frame had no `id:` line. */
  id: string | undefined;
  data: string;
}

/** An open (or refused) SSE connection. */
export interface SseConnection {
  status: number;
  headers: Headers;
  /** The body of a refused connection (status other than 200). */
  body: string;
  /** The last `id:` seen, as EventSource keeps it for `Last-Event-ID`. */
  lastEventId: string | undefined;
  /** Comment lines (`: ping`) seen so far. */
  comments: number;
  /** The next frame, or undefined when the server closed the stream. Rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseFrame | undefined>;
  /** Frames until the stream ends. */
  rest(timeoutMs?: number): Promise<SseFrame[]>;
  /** Frames until `stop` returns true for one (included). */
  until(stop: (frame: SseFrame) => boolean, timeoutMs?: number): Promise<SseFrame[]>;
  close(): void;
}

/** Connects to an SSE URL; pass `lastEventId` to resume. */
export async function connectSse(
  url: string,
  options: { token?: string; lastEventId?: string | undefined; headers?: Record<string, string> } = {},
): Promise<SseConnection> {
  const controller = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
  const response = await fetch(url, { headers, signal: controller.signal });
  const ok = response.status === 200 && (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  const frames: SseFrame[] = [];
  const waiters: (() => void)[] = [];
  let ended = !ok;
  let failure: unknown;
  const connection: SseConnection = {
    status: response.status,
    headers: response.headers,
    body: ok ? '' : await response.text(),
    lastEventId: options.lastEventId,
    comments: 0,
    async next(timeoutMs = scaled(10_000)) {
      const deadline = Date.now() + timeoutMs;
      while (frames.length === 0 && !ended) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`No SSE frame within ${timeoutMs} ms from ${url}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      if (frames.length > 0) return frames.shift();
      if (failure) throw failure;
      return undefined;
    },
    async rest(timeoutMs = scaled(10_000)) {
      const out: SseFrame[] = [];
      for (let frame = await connection.next(timeoutMs); frame; frame = await connection.next(timeoutMs))
        out.push(frame);
      return out;
    },
    async until(stop, timeoutMs = scaled(10_000)) {
      const out: SseFrame[] = [];
      for (;;) {
        const frame = await connection.next(timeoutMs);
        if (!frame) throw new Error(`The stream ended before the awaited frame (got ${out.length} frames)`);
        out.push(frame);
        if (stop(frame)) return out;
      }
    },
    close() {
      controller.abort();
    },
  };
  if (!ok) return connection;

  const wakeAll = () => {
    for (const wake of waiters.splice(0)) wake();
  };
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    let frame: { event?: string; id?: string; data: string[] } = { data: [] };
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (;;) {
          const match = /\r\n|\r|\n/.exec(buffer);
          if (!match) break;
          const line = buffer.slice(0, match.index);
          buffer = buffer.slice(match.index + match[0].length);
          if (line === '') {
            if (frame.data.length > 0 || frame.event !== undefined) {
              if (frame.id !== undefined) connection.lastEventId = frame.id;
              frames.push({ event: frame.event ?? 'message', id: frame.id, data: frame.data.join('\n') });
              wakeAll();
            }
            frame = { data: [] };
            continue;
          }
          if (line.startsWith(':')) {
            connection.comments += 1;
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') frame.event = value;
          else if (field === 'id') frame.id = value;
          else if (field === 'data') frame.data.push(value);
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) failure = error;
    } finally {
      ended = true;
      wakeAll();
    }
  })();
  return connection;
}

/** The parsed JSON data of a frame. */
export function frameData<T = Record<string, unknown>>(frame: SseFrame): T {
  return JSON.parse(frame.data) as T;
}
