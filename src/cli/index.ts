/**
 * The `baton` command line. It sits on the public API, like any embedder; `main.ts` is the bin.
 * Invariants: with `--json`, stdout carries only JSON (one object, or one per line for
 * streams); errors and warnings go to stderr; every runtime a command opens is closed before it
 * exits; exit codes mean the same for every command (`EXIT`).
 */
export { runCli } from './run-cli.js';
export type { CliIo } from './cli-io.js';
