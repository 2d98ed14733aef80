/**
 * One run's event stream, on the runtime's one subscription primitive (`runtime.events`):
 * committed events go out in `seq` order, each once, with `id:` = seq; drafts go out live
 * without an `id:`; the stream ends after the terminal event. A slow client costs bounded memory
 * (the runtime reads on from the log for it) and is never cut off for lagging.
 */
import { isTerminalStatus } from '../../../machines/run-status.js';
import type { Runtime } from '../../index.js';
import { toEventJson } from '../to-json.js';
import type { SseWriter } from './open-sse.js';

/** A run's stream, ready to pump; `none` when the run has ended and nothing is left to replay. */
export type PreparedRunStream = { kind: 'none' } | { kind: 'stream'; pump: (sse: SseWriter) => Promise<void> };

/** Checks the run (`run.not_found`), and whether anything after `after` is left to send. */
export async function prepareRunStream(
  deps: { runtime: Runtime },
  run: { id: string; tenantId: string | null },
  after: number,
): Promise<PreparedRunStream> {
  const { runtime } = deps;
  if (
    isTerminalStatus((await runtime.get(run.id)).status) &&
    (await runtime.readEvents(run.id, { after, limit: 1 })).length === 0
  ) {
    return { kind: 'none' };
  }
  async function pump(sse: SseWriter): Promise<void> {
    let last = after;
    for await (const event of runtime.events(run.id, { after, signal: sse.signal })) {
      if (event.type === 'draft') {
        if (event.seq >= last) await sse.frame({ event: 'draft', data: toEventJson(event) });
        continue;
      }
      await sse.frame({ event: event.type, data: toEventJson(event), id: event.seq });
      last = event.seq;
    }
  }
  return { kind: 'stream', pump };
}
