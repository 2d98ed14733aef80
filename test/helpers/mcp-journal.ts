/** The journal the tests' MCP server (`mcp-server.ts`) keeps of every call it receives. */
import { existsSync, readFileSync } from 'node:fs';

/** One line of the journal. */
export interface JournalEntry {
  kind: 'call' | 'effect' | 'crash' | 'cancelled';
  tool: string;
  args: Record<string, unknown>;
  key: string | null;
  run_id: string | null;
  pid: number;
}

/** Reads a journal (empty when the server has not written one yet). */
export function readJournal(file: string): JournalEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as JournalEntry);
}
