/**
 * The agents a runtime drives runs of: its own (the runtime's planner, tools and policy) and every
 * agent its tools hand work to (`agentTool`) or hand a conversation to (`handoff`), found through
 * their tools in turn, plus any the application names. Each is checked once, before the database
 * is opened.
 */
import { fail } from '../../failure.js';
import type { Planner } from '../../planner/types.js';
import type { Policy } from '../../policy/index.js';
import type { AnyTool } from '../../tools/define-tool.js';
import type { AgentEnv } from '../drive/env.js';
import { plannerTools } from '../ledger/tool-registry.js';

/** An agent as the runtime takes it (what `defineAgent` declares has this shape). */
export interface AgentDefinition {
  readonly name: string;
  readonly tools: readonly AnyTool[];
  readonly planner?: Planner | undefined;
  /** Plans when the agent has no planner of its own (a scripted planner for demos and tests). */
  readonly offlinePlanner?: Planner | undefined;
  readonly policy?: Policy | undefined;
  /** What its model is told (its planner has them): recorded, as a digest, on a handoff to it. */
  readonly instructions?: string | undefined;
}

const NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** True for something that can plan: an object with `next()`. */
function isPlanner(value: unknown): value is Planner {
  return typeof value === 'object' && value !== null && typeof (value as Planner).next === 'function';
}

/** The environment of one agent: its tools by name, as the planner is shown them, its planner and policy. */
export function toAgentEnv(definition: AgentDefinition): AgentEnv {
  const tools = new Map(definition.tools.map((t) => [t.name, t]));
  if (tools.size !== definition.tools.length)
    fail('input.invalid', `Two tools of agent '${definition.name}' share a name`);
  const planner = definition.planner ?? definition.offlinePlanner;
  if (!isPlanner(planner)) {
    fail('input.invalid', `Agent '${definition.name}' has no planner: an agent a runtime drives plans with its own`);
  }
  return {
    name: definition.name,
    planner,
    tools,
    toolSpecs: plannerTools(definition.tools),
    policy: definition.policy,
    instructions: typeof definition.instructions === 'string' ? definition.instructions : null,
  };
}

/**
 * The other agents a runtime drives: those `tools` hand work or a conversation to, and theirs, and
 * `extra` (which stand for the agents of their names). A name taken twice by different agents is
 * refused, and so is an agent tool of the runtime's own agent (a handoff to it stands for it).
 */
export function collectAgents(
  own: string,
  tools: readonly AnyTool[],
  extra: readonly AgentDefinition[] = [],
): Map<string, AgentEnv> {
  const found = new Map<string, AgentDefinition>();
  // An agent named in `extra` stands for the agent of that name its tools name (with another planner, say).
  const given = new Map(extra.map((agent) => [agent.name, agent]));
  const visit = (named: AgentDefinition, handedTo = false): void => {
    const agent = given.get(named.name) ?? named;
    if (!NAME.test(agent.name)) fail('input.invalid', `Agent name '${agent.name}' must match ${NAME}`);
    // A handoff back to the runtime's own agent (from an agent it handed to) is to that agent.
    if (agent.name === own && handedTo) return;
    if (agent.name === own) {
      fail('input.invalid', `Agent '${own}' is the runtime's own agent: an agent tool cannot hand work to it`);
    }
    const seen = found.get(agent.name);
    if (seen) {
      if (seen !== agent) fail('input.invalid', `Two different agents are named '${agent.name}'`);
      return;
    }
    found.set(agent.name, agent);
    agent.tools.forEach(visitTool);
  };
  const visitTool = (tool: AnyTool): void => {
    if (tool.delegate) visit(tool.delegate.agent as unknown as AgentDefinition);
    if (tool.handoff?.agent) visit(tool.handoff.agent as unknown as AgentDefinition, true);
  };
  tools.forEach(visitTool);
  extra.forEach((agent) => visit(agent));
  return new Map([...found].map(([name, definition]) => [name, toAgentEnv(definition)]));
}
