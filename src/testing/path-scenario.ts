/**
 * Turns a model path into what makes the real runtime take it: a planner that decides each
 * step so the executor produces the next event, tools with known effects, and the run's limits.
 */
import { z } from 'zod';
import { statusOf } from '../../machines/run-status.js';
import type { RunEvent } from '../../machines/types.js';
import { createScriptedPlanner } from '../planner/scripted-planner.js';
import type { Decision } from '../planner/types.js';
import type { Policy } from '../policy/index.js';
import type { Budget } from '../runtime/model/types.js';
import { defineTool, type AnyTool } from '../tools/define-tool.js';
import { LOOP_SIGNATURE, MODEL_LIMITS, type RunPath } from './run-model.js';

/** Deadline of runs whose path ends in `timeout`: long enough to reach the held actor first. */
export const MODEL_TIMEOUT_MS = 1_000;

type StepPlan = 'final' | 'ok' | 'invalid' | 'guarded' | 'destroy' | 'fragile' | 'explode' | 'throw';

/** The tools, planner, policy and limits that make the runtime follow one path. */
export interface PathScenario {
  planner: ReturnType<typeof createScriptedPlanner>;
  tools: AnyTool[];
  policy: Policy;
  maxSteps: number;
  budget: Budget;
  /** Effects of the tools, recorded outside Baton's database: `tool:idempotency key`. */
  effects: string[];
  /** Resolves when the `fragile` tool's first attempt has started (and hangs). */
  fragileStarted: Promise<void>;
}

function planFor(next: RunEvent | undefined): StepPlan {
  if (next === undefined) return 'ok';
  switch (next.type) {
    case 'next_step':
      return next.loopSignature === LOOP_SIGNATURE ? 'invalid' : 'ok';
    case 'done':
      return 'final';
    case 'need_approval':
      if (next.reason !== 'approval') return 'fragile';
      return next.risk === 'destructive' ? 'destroy' : 'guarded';
    case 'exec_error':
      return 'explode';
    default:
      // cancel, timeout and budget_exceeded reach the executor while it is held at its gate.
      return 'ok';
  }
}

const DECISIONS: Record<Exclude<StepPlan, 'throw'>, (step: number) => Decision> = {
  final: () => ({ type: 'final', answer: 'model path done' }),
  ok: (n) => ({ type: 'tool_calls', calls: [{ tool: 'ok', args: { n } }] }),
  // The same invalid call every time: a loop the runtime must detect.
  invalid: () => ({ type: 'tool_calls', calls: [{ tool: 'ok', args: { n: 'not a number' } }] }),
  guarded: (n) => ({ type: 'tool_calls', calls: [{ tool: 'guarded', args: { n } }] }),
  destroy: (n) => ({ type: 'tool_calls', calls: [{ tool: 'destroy', args: { n } }] }),
  fragile: (n) => ({ type: 'tool_calls', calls: [{ tool: 'fragile', args: { n } }] }),
  explode: () => ({ type: 'tool_calls', calls: [{ tool: 'explode', args: {} }] }),
};

/** Builds the scenario of a path. */
export function createPathScenario(path: RunPath): PathScenario {
  const plans = new Map<number, StepPlan>();
  const budget: Budget = {};
  let executedCalls = 0;
  let plannerCalls = 0;
  path.steps.forEach((step, i) => {
    const { event, before } = step;
    const stepIndex = before.context.stepIndex;
    if (event.type === 'plan_ready') {
      plans.set(stepIndex, planFor(path.steps[i + 1]?.event));
      plannerCalls += 1;
    }
    if (event.type === 'plan_error') plans.set(stepIndex, 'throw');
    if (event.type === 'next_step' && event.loopSignature === null) executedCalls += 1;
    if (event.type === 'timeout') budget.timeoutMs = MODEL_TIMEOUT_MS;
    if (event.type === 'budget_exceeded') {
      if (statusOf(before.value) === 'planning') budget.maxLlmCalls = plannerCalls;
      else budget.maxToolCalls = executedCalls;
    }
  });

  const effects: string[] = [];
  let startedFragile: () => void = () => undefined;
  const fragileStarted = new Promise<void>((resolve) => (startedFragile = resolve));
  const input = z.object({ n: z.number() });
  const record = (tool: string, key: string) => {
    if (!effects.includes(`${tool}:${key}`)) effects.push(`${tool}:${key}`);
  };
  const tools: AnyTool[] = [
    defineTool({ name: 'ok', description: 'reads', input, effect: 'read', risk: 'low', execute: ({ n }) => ({ n }) }),
    defineTool({
      name: 'guarded',
      description: 'an idempotent effect that needs approval',
      input,
      effect: 'idempotent',
      risk: 'high',
      execute: ({ n }, ctx) => {
        record('guarded', ctx.idempotencyKey);
        return { n };
      },
    }),
    defineTool({
      name: 'destroy',
      description: 'a destructive idempotent effect: the policy asks a human instead of denying it',
      input,
      effect: 'idempotent',
      risk: 'destructive',
      execute: ({ n }, ctx) => {
        record('destroy', ctx.idempotencyKey);
        return { n };
      },
    }),
    defineTool({
      name: 'fragile',
      description: 'an unsafe effect whose first attempt never returns',
      input,
      effect: 'unsafe',
      risk: 'low',
      execute: ({ n }, ctx) => {
        if (ctx.attempt === 1) {
          startedFragile();
          return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', reject, { once: true }));
        }
        record('fragile', ctx.idempotencyKey);
        return { n };
      },
    }),
    defineTool({
      name: 'explode',
      description: 'its policy throws',
      input: z.object({}),
      effect: 'read',
      risk: 'low',
      execute: () => 'never',
    }),
  ];
  const policy: Policy = ({ tool }) => {
    if (tool.name === 'explode') throw new Error('policy bug: explode');
    return tool.risk === 'destructive' ? 'needs_approval' : undefined;
  };
  const planner = createScriptedPlanner((request) => {
    // Past the path, the run is drained: the model answers.
    const plan = plans.get(request.stepIndex) ?? 'final';
    if (plan === 'throw') throw new Error(`scripted planner failure at step ${request.stepIndex}`);
    return DECISIONS[plan](request.stepIndex);
  });
  return { planner, tools, policy, maxSteps: MODEL_LIMITS.maxSteps, budget, effects, fragileStarted };
}
