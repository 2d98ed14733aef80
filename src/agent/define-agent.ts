/** Agents: a name, instructions, tools and (optionally) a policy and a planner, as `baton serve` loads them. */
import { fail } from '../failure.js';
import { createOpenAIPlanner } from '../planner/openai/index.js';
import type { Planner } from '../planner/types.js';
import type { Policy } from '../policy/index.js';
import type { AnyTool } from '../tools/define-tool.js';

/** An agent as its author declares it. */
export interface AgentSpec {
  name: string;
  /** The system instructions a model is given. */
  instructions: string;
  tools: AnyTool[];
  policy?: Policy;
  /** A planner of the agent's own; without one, a model configured by flags or environment plans. */
  planner?: Planner;
  /** Plans when no model is configured (e.g. a scripted planner for demos and tests). */
  offlinePlanner?: Planner;
}

/** A declared agent. */
export type Agent = Readonly<AgentSpec>;

const NAME = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Declares an agent, the default export of an agent module for `baton serve --agent ./agent.ts`.
 * @example
 * export default defineAgent({ name: 'helper', instructions: 'You help.', tools: [search] });
 */
export function defineAgent(spec: AgentSpec): Agent {
  if (!NAME.test(spec.name)) fail('input.invalid', `Agent name '${spec.name}' must match ${NAME}`);
  return Object.freeze({ ...spec });
}

/** A URL as it may be printed: a password in it (`user:pass@`, `?api_key=`, `?key=`) becomes `***`. */
export function withoutCredentials(url: string): string {
  return url
    .replace(/(\/\/[^\s/:@]*):[^\s/@]*@/, '$1:***@')
    .replace(/([?&](?:password|api[_-]?key|key|token)=)[^&#\s]*/gi, '$1***');
}

/** Where a model is, from flags first, then OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL. */
export interface ModelSettings {
  model?: string | undefined;
  baseURL?: string | undefined;
}

/** The planner an agent runs with: its own, else a configured model, else its offline planner. */
export function resolveAgentPlanner(
  agent: Agent,
  settings: ModelSettings = {},
): { planner: Planner; description: string } {
  if (agent.planner) return { planner: agent.planner, description: `the agent's own planner` };
  const baseURL = settings.baseURL ?? process.env.OPENAI_BASE_URL;
  if (baseURL || process.env.OPENAI_API_KEY) {
    const model = settings.model ?? process.env.OPENAI_MODEL ?? 'gpt-4.1-mini';
    return {
      planner: createOpenAIPlanner({ model, ...(baseURL ? { baseURL } : {}), instructions: agent.instructions }),
      description: `model ${model}${baseURL ? ` at ${withoutCredentials(baseURL)}` : ''}`,
    };
  }
  if (agent.offlinePlanner) {
    return {
      planner: agent.offlinePlanner,
      description: 'scripted (set OPENAI_API_KEY or OPENAI_BASE_URL, or pass --base-url, to plan with a model)',
    };
  }
  fail(
    'input.invalid',
    `Agent '${agent.name}' has no planner: set OPENAI_API_KEY or OPENAI_BASE_URL (or pass --base-url) to plan with a model`,
  );
}
