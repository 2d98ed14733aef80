/**
 * The `baton` command line. It sits on the public API, like any embedder; `main.ts` is the bin.
 * Invariants: with `--json`, stdout carries only JSON (one object, or one per line for
 * streams); errors and warnings go to stderr; every runtime a command opens is closed before it
 * exits; exit codes mean the same for every command (`EXIT`).
 */
export { runCli, USAGE } from './run-cli.js';
export { runDemoCommand, DEMO_USAGE } from './demo-command.js';
export { runServeCommand, SERVE_USAGE, DEFAULT_PORT } from './serve-command.js';
export { runRunCommand, RUN_USAGE } from './run-command.js';
export { processIo, type CliIo } from './cli-io.js';
export { EXIT } from './exit-codes.js';
export { loadAgent } from './load-agent.js';
export { createHttpBackend } from './http-backend.js';
export { createLocalBackend } from './local-backend.js';
export { streamRunEvents } from './stream-run-events.js';
export { readSse, type SseMessage } from './read-sse.js';
export type { Backend } from './backend.js';
