/**
 * Server-sent events. Invariants: every stream goes through `openSse` (frames, heartbeats, an
 * `event: error` frame before any abnormal close, the tenant's slot given back); a run's stream
 * delivers each committed event once, in order, with `id:` = seq, and ends after the terminal
 * event; the stream of every run delivers each feed event once, in position order, with `id:` =
 * position; nothing from a run the caller may not see is written to a caller's stream.
 */
export { openSse } from './open-sse.js';
export { prepareRunStream } from './run-stream.js';
export { prepareFeedStream } from './feed-stream.js';
