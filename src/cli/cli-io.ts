/** The streams a command talks to; the real process by default, replaceable in tests. */

/** Where a command reads and writes, and whether a human can answer questions. */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** True when stdin is a terminal, so questions can be asked. */
  interactive: boolean;
}

/** The process's own streams. */
export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    interactive: process.stdin.isTTY === true,
  };
}
