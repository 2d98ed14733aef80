/** A yes/no question on the terminal. */
import { createInterface } from 'node:readline/promises';

/** The answer to a question: yes, no (also an empty line or end of input), or Ctrl-C. */
export type Answer = 'yes' | 'no' | 'interrupted';

/** Asks `question` on `output` and reads one line from `input`; only `y` or `yes` mean yes. */
export async function askYesNo(
  question: string,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
): Promise<Answer> {
  const rl = createInterface({ input, output });
  const controller = new AbortController();
  let interrupted = false;
  rl.on('SIGINT', () => {
    interrupted = true;
    controller.abort();
  });
  // End of input (Ctrl-D, a closed pipe) leaves the question unanswered: that is a no.
  rl.on('close', () => controller.abort());
  try {
    const line = await rl.question(question, { signal: controller.signal });
    return /^\s*y(es)?\s*$/i.test(line) ? 'yes' : 'no';
  } catch {
    return interrupted ? 'interrupted' : 'no';
  } finally {
    rl.close();
  }
}
