/** The README's fenced code blocks, with where they stand, for tests that hold the README to the code. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './run-node.js';

export interface ReadmeBlock {
  /** The line of the opening fence (1-based). */
  line: number;
  /** The fence's language (`ts`, `sh`, …), `''` for none. */
  lang: string;
  /** The nearest heading above it, as written (`### Tokens and tenants`). */
  heading: string;
  code: string;
}

export function readmeText(): string {
  return readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
}

export function readmeBlocks(text = readmeText()): ReadmeBlock[] {
  const blocks: ReadmeBlock[] = [];
  const lines = text.split('\n');
  let heading = '';
  let open: { line: number; lang: string; heading: string; body: string[] } | null = null;
  lines.forEach((line, i) => {
    if (open) {
      if (line.startsWith('```')) {
        blocks.push({ line: open.line, lang: open.lang, heading: open.heading, code: `${open.body.join('\n')}\n` });
        open = null;
      } else open.body.push(line);
      return;
    }
    if (/^#{1,6} /.test(line)) heading = line;
    const fence = /^```(\w*)\s*$/.exec(line);
    if (fence) open = { line: i + 1, lang: fence[1]!, heading, body: [] };
  });
  return blocks;
}
