/** A deterministic planner for tests and the demo: decisions come from a script. */
import { fail } from '../failure.js';
import type { PlannerDecision as Decision, Planner, PlannerRequest, PlannerResponse } from './types.js';

/** One scripted step: a decision, or a function of the request that returns one. */
export type ScriptEntry = Decision | ((request: PlannerRequest) => Decision | Promise<Decision>);

/** A script: entries indexed by step, or one function for every step. */
export type Script = readonly ScriptEntry[] | ((request: PlannerRequest) => Decision | Promise<Decision>);

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * Creates a planner that answers step `i` with `script[i]`. It is indexed by step, not by
 * call, so a run restored after a crash gets the same decision when it asks again.
 * @example
 * const planner = createScriptedPlanner([
 *   { type: 'tool_calls', calls: [{ tool: 'echo', args: { text: 'hi' } }] },
 *   { type: 'final', answer: 'done' },
 * ]);
 */
export function createScriptedPlanner(script: Script): Planner & { calls: number } {
  const planner = {
    calls: 0,
    // Asking a script again costs nothing: its answers may commit with their transition.
    cheap: true,
    async next(request: PlannerRequest): Promise<PlannerResponse> {
      planner.calls += 1;
      const entry = typeof script === 'function' ? script : script[request.stepIndex];
      if (entry === undefined) fail('planner.invalid_output', `The script has no step ${request.stepIndex}`);
      const decision = typeof entry === 'function' ? await entry(request) : entry;
      const prompt = request.messages.map((m) => m.content).join('\n');
      return {
        decision,
        usage: { inputTokens: estimateTokens(prompt), outputTokens: estimateTokens(JSON.stringify(decision)) },
      };
    },
  };
  return planner;
}
