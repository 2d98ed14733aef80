#!/usr/bin/env node
/** The `baton` bin: runs the command line and exits with its code. */
import { runCli } from './run-cli.js';

// Output piped into a reader that stopped early (`| head`) is not an error of ours.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await runCli(process.argv.slice(2));
// The command is over: what an agent module left open (an MCP server's process, a client's
// socket) must not keep the process alive. Output is flushed first.
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
await new Promise<void>((resolve) => process.stderr.write('', () => resolve()));
process.exit(code);
