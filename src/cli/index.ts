/**
 * The `baton` command line. It sits on the public API, like any embedder; `main.ts` is the bin.
 * Invariants: with `--json`, stdout carries only JSON lines; errors and warnings go to stderr;
 * every runtime a command opens is closed before it exits.
 */
export { runCli, USAGE } from './run-cli.js';
export { runDemoCommand, DEMO_USAGE } from './demo-command.js';
export { processIo, type CliIo } from './cli-io.js';
