/**
 * Agents: what `baton serve --agent` runs. An agent module's default export is `defineAgent(…)`.
 * Invariant: an agent is data (instructions, tools, policy, planner); the runtime runs it.
 */
export { defineAgent, resolveAgentPlanner, type Agent, type AgentSpec, type ModelSettings } from './define-agent.js';
export { agentTool, subAgentsOf, type AgentToolOptions } from './agent-tool.js';
export { handoff, type HandoffOptions } from './handoff.js';
