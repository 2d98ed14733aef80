/** What `baton serve` and `baton worker` do while they run: log the runs' events until a signal stops them. */
import type { Runtime } from '../index.js';
import { toEventJson } from './api-json.js';
import { toEventLine } from './format-event.js';

/** Logs events of `types` as they commit until `signal` aborts. */
export async function logEventsUntilStopped(
  runtime: Runtime,
  types: readonly string[],
  log: (text: string, json: Record<string, unknown>) => void,
  signal: AbortSignal,
): Promise<void> {
  const unwatch = runtime.watch((event) => {
    if (!types.includes(event.type)) return;
    // The event as the API and `baton events --json` give it: snake_case, `run_id`, `created_at`.
    log(`${event.runId} ${toEventLine(event)}`, { type: 'event', event: toEventJson(event) });
  });
  // The process lives until the signal: a worker on a SQLite file with nothing to drive has no
  // socket or timer of its own that keeps it (the runtime's wake-up timer does not hold it open).
  const alive = setInterval(() => undefined, 2 ** 30);
  try {
    await new Promise<void>((resolveStop) => {
      if (signal.aborted) resolveStop();
      signal.addEventListener('abort', () => resolveStop(), { once: true });
    });
  } finally {
    clearInterval(alive);
    unwatch();
  }
}
