/** Ctrl-C and SIGTERM as an `AbortSignal`, so a command can stop cleanly (closing what it opened). */

/** Aborts `signal` on the first SIGINT or SIGTERM until `dispose()`; a second one exits at once. */
export function onInterrupt(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const handler = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
