/**
 * Server-sent events. Invariants: every stream goes through `openSse` (frames, heartbeats, an
 * `event: error` frame before any abnormal close, the tenant's slot given back); a run's stream
 * delivers each committed event once, in order, with `id:` = seq, and ends after the terminal
 * event; nothing from a run the caller may not see enters a caller's queue.
 */
export { openSse, type SseWriter, type SseOptions } from './open-sse.js';
export { createStreamSlots, type StreamSlots } from './stream-slots.js';
export { prepareRunStream, isTerminalEvent, type PreparedRunStream } from './run-stream.js';
export { prepareTenantStream, createTenantLookup } from './tenant-stream.js';
