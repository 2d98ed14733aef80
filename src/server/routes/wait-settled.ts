/** `?wait=true`: hold the answer until the run is terminal or waiting for a human, bounded. */
import type { Run, Runtime } from '../../index.js';

/** The run once it settles, or as it is when `timeoutMs` passes or a signal aborts (client gone, server closing). */
export async function waitSettled(
  runtime: Runtime,
  runId: string,
  timeoutMs: number,
  signals: AbortSignal[],
): Promise<Run> {
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const timer = setTimeout(stop, timeoutMs);
  for (const signal of signals) signal.addEventListener('abort', stop);
  try {
    // A wait that fails (e.g. the runtime closed) answers with the run as it is.
    await Promise.race([runtime.wait(runId).catch(() => undefined), stopped]);
  } finally {
    clearTimeout(timer);
    for (const signal of signals) signal.removeEventListener('abort', stop);
  }
  return runtime.get(runId);
}
