/**
 * `handoff.back`: the built-in tool an agent that was handed a run's conversation (`handoff`) is
 * offered to hand it back to the agent below it on the run's handoff stack. The runtime never
 * runs it: a call pops the stack, and the agent below plans the next step.
 */
import { z } from 'zod';
import { fail } from '../failure.js';
import { defineTool, type AnyTool } from './define-tool.js';

/** The name of the built-in hand-back tool. */
export const HANDOFF_BACK = 'handoff.back';

/** What a model may say when it hands the conversation back: why, for the agent below. */
const handBackInput = z
  .object({ reason: z.string().max(2000).optional().describe('Why, for the agent that takes over again') })
  .strict();

/** The `handoff.back` tool, offered to the agent on top of a run's handoff stack (never to its first agent). */
export const handoffBackTool: AnyTool = defineTool({
  name: HANDOFF_BACK,
  description: 'Hand the conversation back to the agent that handed it to you, when your part is done.',
  input: handBackInput,
  effect: 'read',
  risk: 'low',
  allowEdit: false,
  handoff: { agent: null },
  execute: () => fail('internal.error', `'${HANDOFF_BACK}' pops the run's handoff stack, never runs`),
}) as AnyTool;

/** A handoff's description for the agent that hands back: whom it returns to. */
export function handBackDescription(to: string): string {
  return `Hand the conversation back to agent '${to}', which handed it to you, when your part is done.`;
}
