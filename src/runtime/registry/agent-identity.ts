/**
 * Which agent a run belongs to: the name of the agent whose runtime started it and a fingerprint
 * of that agent's tools, both stored on the run. A runtime drives only runs of its own agent (by
 * name), so a worker of one agent never drives another's run with its own tools and planner;
 * runs from before agents were recorded belong to every agent.
 */
import { createHash } from 'node:crypto';
import { createFailure, type Failure } from '../../failure.js';
import { agentSet, type AgentSet, type RunRow } from '../../store/index.js';
import type { AnyTool } from '../../tools/define-tool.js';

/** The agent name of a runtime created without one. */
export const DEFAULT_AGENT = 'default';

/** The agent a runtime drives runs of (and the other agents it drives runs of: those its agent tools call). */
export interface AgentIdentity {
  name: string;
  /** A fingerprint of the agent's tools (their names): which toolset a run was started with. */
  tools: string;
  /** Every agent whose runs this runtime drives, its own first. */
  drives: readonly string[];
  /** The same, as the store's statements take it. */
  set: AgentSet;
}

/** A fingerprint of a toolset: its tools' names. */
export function toolsFingerprint(tools: readonly AnyTool[]): string {
  const names = tools.map((tool) => tool.name).sort();
  return createHash('sha256').update(names.join('\n')).digest('hex').slice(0, 16);
}

/** The identity of an agent named `name` (default `default`) with these tools, driving runs of `others` too. */
export function agentIdentity(
  name: string | undefined,
  tools: readonly AnyTool[],
  others: readonly string[] = [],
): AgentIdentity {
  const own = name ?? DEFAULT_AGENT;
  const drives = [own, ...others.filter((other) => other !== own)];
  return { name: own, tools: toolsFingerprint(tools), drives, set: agentSet(drives) };
}

/** `run.agent_mismatch` when the run belongs to another agent than `agent`; null when this agent may drive it. */
export function agentMismatchOf(row: Pick<RunRow, 'id' | 'agent'>, agent: AgentIdentity): Failure | null {
  if (row.agent === null || agent.drives.includes(row.agent)) return null;
  return createFailure(
    'run.agent_mismatch',
    `Run '${row.id}' belongs to agent '${row.agent}'; this runtime drives agent '${agent.name}' (a process with agent '${row.agent}' drives it)`,
    { details: { run_id: row.id, run_agent: row.agent, runtime_agent: agent.name } },
  );
}
