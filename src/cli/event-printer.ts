/** Printing a run's events as they come: one line each, drafts (streamed model text) inline. */
import type { EventJson } from './api-json.js';
import type { CliIo } from './cli-io.js';
import { toEventLine } from './format-event.js';
import { terminalText } from './terminal-text.js';

/**
 * Prints events to `io.stdout`: readable lines, or with `json` one JSON object per line (each
 * names its run). `indent` sets a child run's lines apart from its parent's.
 */
export function createEventPrinter(io: CliIo, json: boolean, indent = '') {
  let drafting = false;
  return {
    print(event: EventJson): void {
      if (json) {
        io.stdout.write(`${JSON.stringify(event)}\n`);
        return;
      }
      if (event.type === 'draft') {
        // Model text as it streams: shown inline, never the answer (that comes with the end).
        io.stdout.write(`${drafting ? '' : '  … '}${terminalText(String(event.data.text))}`);
        drafting = true;
        return;
      }
      this.breakLine();
      io.stdout.write(`${indent}${toEventLine(event)}\n`);
    },
    /** Ends a line of draft text, before anything else is written. */
    breakLine(): void {
      if (drafting) io.stdout.write('\n');
      drafting = false;
    },
  };
}
