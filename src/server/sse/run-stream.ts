/**
 * One run's event stream. Invariants: the live subscription is taken before the log is read, so
 * nothing committed in between is lost; committed events go out in `seq` order, each once, with
 * `id:` = seq, and a gap (never expected) is filled from the log; drafts go out live without an
 * `id:` (their seq is the last stored one's); the stream ends after the terminal event.
 */
import type { Runtime, RunEventRecord } from '../../index.js';
import { httpError } from '../http-error.js';
import { toEventJson } from '../to-json.js';
import type { EventBus } from './event-bus.js';
import { createEventQueue } from './event-queue.js';
import type { SseWriter } from './open-sse.js';

/** True for the event that ends a run's stream. */
export function isTerminalEvent(event: RunEventRecord): boolean {
  return event.type === 'state' && (event.data.to === 'succeeded' || event.data.to === 'failed');
}

const TERMINAL: ReadonlySet<string> = new Set(['succeeded', 'failed']);

/** A run's stream, subscribed and ready; `none` when the run has ended and nothing is left to replay. */
export type PreparedRunStream = { kind: 'none' } | { kind: 'stream'; pump: (sse: SseWriter) => Promise<void> };

/** Subscribes to a run's live events, then opens its log after `after`. */
export async function prepareRunStream(
  deps: { runtime: Runtime; bus: EventBus; queueLimit: number },
  run: { id: string; tenantId: string | null },
  after: number,
): Promise<PreparedRunStream> {
  const { runtime, bus } = deps;
  const queue = createEventQueue(deps.queueLimit);
  const unsubscribe = bus.subscribeRun(run.id, queue.push);
  const replay = runtime.events(run.id, { after, follow: false });
  let first: IteratorResult<RunEventRecord>;
  try {
    first = await replay.next();
  } catch (error) {
    unsubscribe();
    throw error;
  }
  if (first.done && TERMINAL.has(runtime.get(run.id).status)) {
    unsubscribe();
    return { kind: 'none' };
  }

  async function pump(sse: SseWriter): Promise<void> {
    sse.signal.addEventListener('abort', () => queue.stop(), { once: true });
    const send = (event: RunEventRecord) => sse.frame({ event: event.type, data: toEventJson(event), id: event.seq });
    let last = after;
    try {
      for (let item = first; !item.done; item = await replay.next()) {
        await send(item.value);
        last = item.value.seq;
        if (isTerminalEvent(item.value) || sse.signal.aborted) return;
      }
      for (;;) {
        const event = await queue.next();
        if (!event) {
          if (queue.overflowed) throw lagging(run.id, last);
          return;
        }
        if (event.type === 'draft') {
          if (event.seq >= last) await sse.frame({ event: 'draft', data: toEventJson(event) });
          continue;
        }
        if (event.seq <= last) continue;
        if (event.seq > last + 1) {
          for await (const missed of runtime.events(run.id, { after: last, follow: false })) {
            if (missed.seq >= event.seq) break;
            await send(missed);
            last = missed.seq;
          }
        }
        await send(event);
        last = event.seq;
        if (isTerminalEvent(event)) return;
      }
    } finally {
      unsubscribe();
      await replay.return(undefined);
    }
  }
  return { kind: 'stream', pump };
}

function lagging(runId: string, last: number) {
  return httpError('stream.lagging', `The client fell too far behind run '${runId}'; reconnect with Last-Event-ID`, {
    details: { run_id: runId, last_event_id: last },
  });
}
