/**
 * An agent called as a tool: each call starts a child run of the agent (durable, with its own
 * ledger, events and budget), the parent waits for it holding nothing, and the child's answer is
 * the call's result (its failure the call's failure, told to the model).
 */
import { z } from 'zod';
import { defineTool, type AnyTool, type ChildBudget, type Risk, type Tool } from '../tools/define-tool.js';
import { resolveAgentPlanner, type Agent, type ModelSettings } from './define-agent.js';

/** What an agent tool's call takes by default: the task for the agent, in words. */
const taskInput = z.object({ input: z.string().min(1).describe('The task for the agent, in words') }).strict();

/** How an agent is offered as a tool. */
export interface AgentToolOptions<I> {
  /** The tool's name (default `agent.<agent name>`). */
  name?: string;
  /** What the model is told the agent does (default: from its instructions). */
  description?: string;
  /**
   * The call's arguments (default `{ input: string }`, the child's input). With a schema of its
   * own, the child's input is the parsed arguments as JSON, unless they have an `input` string.
   */
  input?: z.ZodType<I>;
  /** The child's limits, each a slice of what the parent has left (never more than that). */
  budget?: ChildBudget;
  /** Who must approve a call before the child starts (default `low`: none). */
  risk?: Risk;
}

/**
 * Offers an agent to another agent as a tool. The runtime of the calling agent drives the child
 * runs too, with the called agent's planner (`planner`, else `offlinePlanner`; `baton serve`,
 * `worker` and `run --agent` give it the model they are configured with, as to the module's own).
 * @example
 * const researcher = defineAgent({ name: 'researcher', instructions: 'Find facts.', tools: [search], planner });
 * const runtime = createRuntime({ database: './baton.db', planner, tools: [agentTool(researcher)] });
 */
export function agentTool<I = { input: string }>(agent: Agent, options: AgentToolOptions<I> = {}): Tool<I, string> {
  const name = options.name ?? `agent.${agent.name}`;
  const firstLine = agent.instructions.split('\n')[0]?.slice(0, 200) ?? '';
  return defineTool<I, string>({
    name,
    description: options.description ?? `Hands a task to agent '${agent.name}' and returns its answer. ${firstLine}`,
    input: (options.input ?? taskInput) as z.ZodType<I>,
    // A call that is interrupted finds the same child again (its id is the call's): never two.
    effect: 'idempotent',
    risk: options.risk ?? 'low',
    execute() {
      throw new Error(`Tool '${name}' runs as a child run, never in place`);
    },
    delegate: {
      agent: agent as unknown as { readonly name: string; readonly tools: readonly Tool[] },
      ...(options.budget ? { budget: options.budget } : {}),
      toInput: (args) => {
        const input = (args as { input?: unknown } | null)?.input;
        return typeof input === 'string' && (options.input === undefined || Object.keys(args as object).length === 1)
          ? input
          : JSON.stringify(args);
      },
    },
  });
}

/**
 * The agents an agent's tools hand work (or the conversation) to, and theirs, each with the planner it plans with under
 * these model settings (`resolveAgentPlanner`): what the command line gives `createRuntime` as
 * `agents`, so a child agent plans with the configured model too.
 */
export function subAgentsOf(agent: Agent, settings: ModelSettings = {}): Agent[] {
  const found = new Map<string, Agent>();
  const visit = (tools: readonly AnyTool[]): void => {
    for (const tool of tools) {
      const sub = (tool.delegate?.agent ?? tool.handoff?.agent ?? undefined) as unknown as Agent | undefined;
      if (!sub || sub.name === agent.name || found.has(sub.name)) continue;
      found.set(sub.name, sub);
      visit(sub.tools);
    }
  };
  visit(agent.tools);
  return [...found.values()].map((sub) => ({ ...sub, planner: resolveAgentPlanner(sub, settings).planner }));
}
