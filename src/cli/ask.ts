/** Questions on the terminal: yes or no for an approval, a line for an answer. */
import { createInterface } from 'node:readline/promises';

/** The answer to a question: yes, no (also an empty line or end of input), or Ctrl-C. */
export type Answer = 'yes' | 'no' | 'interrupted';

/** Asks `question` on `output` and reads one line from `input`; only `y` or `yes` mean yes. */
export async function askYesNo(
  question: string,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<Answer> {
  const line = await terminalLines(input, output).read(question);
  if (line.kind === 'interrupted') return 'interrupted';
  // End of input (Ctrl-D, a closed pipe) leaves the question unanswered: that is a no.
  return line.kind === 'line' && /^\s*y(es)?\s*$/i.test(line.text) ? 'yes' : 'no';
}

/** A line read for a question: its text, nothing (end of input), or Ctrl-C. */
export type Line = { kind: 'line'; text: string } | { kind: 'none' } | { kind: 'interrupted' };

/** Where the answers to a run's questions are read from: the terminal, or lines piped in. */
export interface LineSource {
  /** Writes `prompt` and reads one line. */
  read(prompt: string): Promise<Line>;
  close(): void;
}

/** Asks on a terminal: one readline per question (as `askYesNo` does), so the two never compete. */
export function terminalLines(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): LineSource {
  return {
    async read(prompt) {
      const rl = createInterface({ input, output });
      const controller = new AbortController();
      let interrupted = false;
      rl.on('SIGINT', () => {
        interrupted = true;
        controller.abort();
      });
      rl.on('close', () => controller.abort());
      try {
        return { kind: 'line', text: await rl.question(prompt, { signal: controller.signal }) };
      } catch {
        return interrupted ? { kind: 'interrupted' } : { kind: 'none' };
      } finally {
        rl.close();
      }
    },
    close() {},
  };
}

/**
 * Reads piped lines, one per question, from one reader for the whole run (a reader per question
 * would drop the lines it had buffered past its own). The prompt and the line read are echoed, so
 * the output reads as a terminal's would. `signal` (Ctrl-C) stops a read that waits.
 */
export function pipedLines(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  signal: AbortSignal,
): LineSource {
  const rl = createInterface({ input, terminal: false });
  const queue: string[] = [];
  let ended = false;
  let waiter: ((line: string | null) => void) | undefined;
  rl.on('line', (line) => {
    if (waiter) {
      waiter(line);
      waiter = undefined;
    } else queue.push(line);
  });
  rl.on('close', () => {
    ended = true;
    waiter?.(null);
    waiter = undefined;
  });
  const next = () =>
    queue.length > 0
      ? Promise.resolve(queue.shift()!)
      : ended
        ? Promise.resolve(null)
        : new Promise<string | null>((resolve) => (waiter = resolve));
  return {
    async read(prompt) {
      output.write(prompt);
      const aborted = new Promise<'interrupted'>((resolve) => {
        if (signal.aborted) resolve('interrupted');
        signal.addEventListener('abort', () => resolve('interrupted'), { once: true });
      });
      const line = await Promise.race([next(), aborted]);
      if (line === 'interrupted') return { kind: 'interrupted' };
      output.write(`${line ?? ''}\n`);
      return line === null ? { kind: 'none' } : { kind: 'line', text: line };
    },
    close() {
      rl.close();
    },
  };
}
