/** The journal the tests' MCP server (`mcp-server.ts`) keeps of every call it receives. */
import { readJsonLines } from './json-lines.js';

/** One line of the journal. */
export interface JournalEntry {
  kind: 'call' | 'effect' | 'crash' | 'cancelled' | 'refused' | 'answer';
  tool: string;
  args: Record<string, unknown>;
  key: string | null;
  run_id: string | null;
  pid: number;
}

/** Reads a journal (empty when the server has not written one yet). */
export function readJournal(file: string): JournalEntry[] {
  return readJsonLines<JournalEntry>(file);
}
