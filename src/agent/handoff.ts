/**
 * Handoffs: a tool whose call hands the run's conversation to another agent of the same
 * deployment (the OpenAI Agents SDK's handoff), within the same run. The agent handed to plans the
 * next steps with its own planner (its instructions), tools and policy, seeing the conversation so
 * far; it is pushed on the run's handoff stack, in the run's checkpoint, and `handoff.back` pops it.
 */
import { z } from 'zod';
import { defineTool, type HandoffTarget, type Risk, type Tool } from '../tools/define-tool.js';
import type { Agent } from './define-agent.js';

/** How an agent is offered as a handoff. */
export interface HandoffOptions {
  /** The tool's name (default `handoff.<agent name>`). */
  name?: string;
  /** What the model is told about when to hand over (default: from the agent's instructions). */
  description?: string;
  /** Who must approve a handoff before it happens (default `low`: none). */
  risk?: Risk;
}

/** What a handoff call takes: why, for the agent that takes over (optional). */
const handoffInput = z
  .object({ reason: z.string().max(2000).optional().describe('Why, for the agent that takes over') })
  .strict();

/**
 * Offers a handoff to `agent`: a call of the tool makes `agent` plan the run's next steps (until
 * it hands back with `handoff.back`). Unlike `agentTool`, no child run is started: one run, one
 * conversation, one ledger, one budget; each step records the agent that planned it.
 * @example
 * const billing = defineAgent({ name: 'billing', instructions: 'You handle refunds.', tools: [refund], planner });
 * const triage = defineAgent({ name: 'triage', instructions: 'Route the customer.', tools: [handoff(billing)], planner });
 */
export function handoff(agent: Agent, options: HandoffOptions = {}): Tool<{ reason?: string }, string> {
  const name = options.name ?? `handoff.${agent.name}`;
  const firstLine = agent.instructions.split('\n')[0]?.slice(0, 200) ?? '';
  return defineTool<{ reason?: string }, string>({
    name,
    description: options.description ?? `Hand the conversation to agent '${agent.name}'. ${firstLine}`,
    input: handoffInput,
    effect: 'read',
    risk: options.risk ?? 'low',
    allowEdit: false,
    handoff: { agent: agent as unknown as NonNullable<HandoffTarget['agent']> },
    execute() {
      throw new Error(`Tool '${name}' hands the conversation over, never runs in place`);
    },
  });
}
