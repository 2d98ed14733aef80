/** The streams a command talks to; the real process by default, replaceable in tests. */
import { fstatSync } from 'node:fs';

/** Where a command reads and writes, and whether a human can answer questions. */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** True when stdin is a terminal, so questions can be asked. */
  interactive: boolean;
  /** True when stdin is a pipe or a file (not a terminal, not /dev/null): answers can be read from it. */
  piped?: boolean;
}

/** True when the process's stdin is a pipe or a regular file. */
function stdinIsPiped(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
}

/** The process's own streams. */
export function processIo(): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    interactive: process.stdin.isTTY === true,
    piped: process.stdin.isTTY !== true && stdinIsPiped(),
  };
}
