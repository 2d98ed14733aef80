/** Compaction after a context-length error: the oldest tool outputs make room first. */
import type { PlannerMessage, PlannerTool } from '../types.js';
import { promptChars } from './estimate.js';

/** What compaction did: the new messages, how many outputs it replaced, and the prompt size before and after. */
export interface Compaction {
  messages: PlannerMessage[];
  compacted: number;
  beforeTokens: number;
  afterTokens: number;
}

function note(tool: string, chars: number): string {
  return `[The output of '${tool}' (${chars} characters) was removed to fit the context window.]`;
}

/**
 * Replaces the content of tool outputs with a short note, oldest first, until the prompt
 * estimate is at most half of what it was (or no output is left to replace).
 */
export function compactMessages(
  instructions: string,
  messages: readonly PlannerMessage[],
  tools: readonly PlannerTool[],
): Compaction {
  const before = promptChars(instructions, messages, tools);
  const target = before / 2;
  let chars = before;
  let compacted = 0;
  const out = messages.map((message) => {
    if (chars <= target || message.role !== 'tool') return message;
    const replacement = note(message.tool, message.content.length);
    // An output already shorter than the note gains nothing.
    if (replacement.length >= message.content.length) return message;
    chars -= message.content.length - replacement.length;
    compacted += 1;
    return { ...message, content: replacement };
  });
  return { messages: out, compacted, beforeTokens: Math.ceil(before / 4), afterTokens: Math.ceil(chars / 4) };
}
