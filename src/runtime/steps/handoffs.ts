/**
 * Handoffs within a run (`handoff(agent)`, `handoff.back`): which agent plans a step (the top of
 * the run's handoff stack, in its checkpoint), what a handoff call does (it settles at once: no
 * effect outside the run), and the stack a step leaves, which the step's `next_step` carries so
 * the change commits with the step's results. Invariant: the stack changes only with the
 * transition that ends a step, so a crash anywhere before it leaves the agent that planned the
 * step on top, and the step's handoff call (a `read`) settles the same way again.
 */
import { createHash } from 'node:crypto';
import type { HandoffFrame } from '../../../machines/types.js';
import { DEFAULTS } from '../../defaults.js';
import { createFailure, type Failure } from '../../failure.js';
import type { PlannerTool } from '../../planner/types.js';
import { HANDOFF_BACK, handBackDescription, handoffBackTool } from '../../tools/handoff-back.js';
import { toErrorResult, type ToolResult } from '../../tools/tool-result.js';
import { agentNamed, agentOf, type AgentEnv, type LiveRun, type RuntimeEnv } from '../drive/env.js';
import { plannerTools } from '../ledger/tool-registry.js';
import type { PreparedCall } from '../ledger/prepared-call.js';
import type { CallScope } from './call-scope.js';
import { failpoint } from '../model/failpoints.js';

/** `handoff.back` as the planner is shown it, made once it is first needed (after the runtime checked zod). */
let backSpec: PlannerTool | undefined;

/** The agent that plans with this stack and the tools it is offered; a failure when this runtime lacks it. */
export function plannerAgent(
  env: RuntimeEnv,
  live: LiveRun,
  stack: readonly HandoffFrame[],
): { agent: AgentEnv; tools: PlannerTool[]; note?: string } | { failure: Failure } {
  const top = stack[stack.length - 1];
  if (!top) return { agent: agentOf(env, live), tools: agentOf(env, live).toolSpecs };
  const agent = agentNamed(env, top.agent);
  if (!agent) {
    return {
      failure: createFailure(
        'run.agent_mismatch',
        `Run '${live.driver.runId}' was handed to agent '${top.agent}' (call ${top.callId}), which this runtime does not have`,
        { details: { run_id: live.driver.runId, agent: top.agent, handoff_stack: stack.map((f) => f.agent) } },
      ),
    };
  }
  const below = stack.length > 1 ? stack[stack.length - 2]!.agent : agentOf(env, live).name;
  // The agent on top may hand back to the one below (unless it has a tool of that name itself).
  backSpec ??= plannerTools([handoffBackTool])[0]!;
  const back = agent.tools.has(HANDOFF_BACK) ? [] : [{ ...backSpec, description: handBackDescription(below) }];
  // Instructions changed since the handoff (a new deployment): it plans with its current ones, said so.
  const digest = digestOf(agent.instructions);
  const changed = top.instructions !== null && digest !== null && digest !== top.instructions;
  return {
    agent,
    tools: [...agent.toolSpecs, ...back],
    ...(changed
      ? {
          note: `Agent '${agent.name}' was handed the conversation with other instructions (sha256 ${top.instructions}…); it plans with its current ones (${digest}…)`,
        }
      : {}),
  };
}

/** A successful handoff call's result: what the model that called it is shown. */
function handedResult(text: string): ToolResult {
  return { status: 'ok', content: text, durationMs: 0, truncated: false, retryable: false };
}

/** The failed result of a handoff that cannot happen, told to the model. */
function refused(message: string, details: Record<string, unknown>): ToolResult {
  return toErrorResult(createFailure('tool.failed', message, { details }));
}

/**
 * Settles a call of a handoff tool (it never runs): succeeded, when it is the step's first
 * handoff and it can happen (the agent exists, the stack is not too deep, there is one to hand
 * back to); failed otherwise, the model told why. The stack itself changes at the step's end.
 */
export function callHandoff(
  scope: CallScope,
  call: PreparedCall,
  calls: readonly PreparedCall[],
  stack: readonly HandoffFrame[],
): void {
  const { env, live } = scope;
  const target = call.tool!.handoff!.agent;
  const earlier = calls.find(
    (c) => c !== call && c.index < call.index && c.tool?.handoff && c.row?.status === 'succeeded',
  );
  if (earlier) {
    const text = `Not done: call ${earlier.id} of this step already handed the conversation over (one handoff a step)`;
    scope.settle(call, 'failed', refused(text, { handed_by: earlier.id }));
    return;
  }
  if (target === null) {
    if (stack.length === 0) {
      scope.settle(call, 'failed', refused('There is no agent to hand the conversation back to', {}));
      return;
    }
    const to = stack.length > 1 ? stack[stack.length - 2]!.agent : agentOf(env, live).name;
    scope.settle(call, 'succeeded', handedResult(`Handed the conversation back to agent '${to}'`));
    return;
  }
  if (!agentNamed(env, target.name)) {
    scope.settle(call, 'failed', refused(`Agent '${target.name}' is not one this runtime has`, { agent: target.name }));
    return;
  }
  if (stack.length >= DEFAULTS.maxHandoffDepth) {
    const text = `Not handed over: ${stack.length} handoffs are open in this run, at most ${DEFAULTS.maxHandoffDepth}; hand back first`;
    scope.settle(call, 'failed', refused(text, { depth: stack.length, max_depth: DEFAULTS.maxHandoffDepth }));
    return;
  }
  scope.settle(call, 'succeeded', handedResult(`Handed the conversation to agent '${target.name}'`));
}

/** The first 16 hex digits of the SHA-256 of an agent's instructions, or null. */
function digestOf(instructions: string | null | undefined): string | null {
  return instructions ? createHash('sha256').update(instructions).digest('hex').slice(0, 16) : null;
}

/**
 * The handoff stack a step leaves, from its settled calls (its first succeeded handoff call),
 * with the `handoff` event that says so; null when no call of the step handed over.
 */
export function stackAfterStep(
  scope: CallScope,
  calls: readonly PreparedCall[],
  stack: readonly HandoffFrame[],
): HandoffFrame[] | null {
  const { env, live, stepIndex } = scope;
  const call = calls.find((c) => c.tool?.handoff && c.row?.status === 'succeeded');
  if (!call) return null;
  const from = stack[stack.length - 1]?.agent ?? agentOf(env, live).name;
  const target = call.tool!.handoff!.agent;
  let next: HandoffFrame[];
  if (target === null) {
    next = stack.slice(0, -1);
  } else {
    const agent = agentNamed(env, target.name)!;
    const frame: HandoffFrame = {
      agent: agent.name,
      step: stepIndex + 1,
      callId: call.id,
      tools: [...agent.tools.keys()],
      instructions: digestOf(
        agent.instructions ?? (typeof target.instructions === 'string' ? target.instructions : null),
      ),
    };
    next = [...stack, frame];
  }
  failpoint('handoff.settled');
  const to = next[next.length - 1]?.agent ?? agentOf(env, live).name;
  live.driver.emit('handoff', {
    step_index: stepIndex,
    tool_call_id: call.id,
    direction: target === null ? 'back' : 'to',
    from,
    to,
    reason:
      typeof (call.parsed as { reason?: unknown } | null)?.reason === 'string'
        ? (call.parsed as { reason: string }).reason
        : null,
    handoff_stack: toHandoffStackData(next),
  });
  return next;
}

/** A run's handoff stack as events show it: each agent handed to, oldest first (the run's own agent is below them all). */
export function toHandoffStackData(stack: readonly HandoffFrame[]): Record<string, unknown>[] {
  return stack.map((frame) => ({
    agent: frame.agent,
    step: frame.step,
    tool_call_id: frame.callId,
    tools: frame.tools,
    instructions_sha256: frame.instructions,
  }));
}
