import type { ApprovalKind } from '../../src/store/index.js';
/**
 * The seeded world of the kill soak: run `i` of seed `s` has a plan (1–8 calls of mixed effect
 * classes spread over steps, some high-risk), and each approval a seeded way of being decided.
 * Everything is a pure function of the seed, so every restart of the child, and the parent's
 * checks, see the same plans and the same choices.
 */
import { readJsonLines } from './json-lines.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SoakJournalLine } from './soak-child.js';
import { createScriptedPlanner, EFFECTS, type Effect, type Risk } from '../../src/index.js';
import { between, mulberry32, pick, seedOf } from './prng.js';
import { worldToolName } from './world-tools.js';

/** One planned call. */
export interface SoakCall {
  tool: string;
  effect: Effect;
  risk: Risk;
  args: { value: string };
}

/** The plan of one run: the calls of each step, then a final answer. */
export interface SoakPlan {
  index: number;
  steps: SoakCall[][];
  answer: string;
}

/** The plan of run `index` under `seed`. */
export function soakPlan(seed: number, index: number): SoakPlan {
  const random = mulberry32(seedOf(seed, 'plan', index));
  const count = between(random, 1, 8);
  const steps: SoakCall[][] = Array.from({ length: between(random, 1, count) }, () => []);
  for (let k = 0; k < count; k += 1) {
    // Every step gets one call first; the rest land anywhere.
    const step = k < steps.length ? steps[k]! : pick(random, steps);
    const effect = pick(random, EFFECTS);
    const risk: Risk = random() < 0.3 ? 'high' : 'low';
    step.push({ tool: worldToolName(effect, risk), effect, risk, args: { value: `r${index}.k${k}` } });
  }
  return { index, steps, answer: `run ${index} done` };
}

/** The scripted planner of the soak: step `s` of the run whose context names its index (with a short seeded pause). */
export function soakPlanner(seed: number) {
  return createScriptedPlanner(async (request) => {
    const index = Number(request.context.soak_index);
    const plan = soakPlan(seed, index);
    await sleep(between(mulberry32(seedOf(seed, 'think', request.runId, request.stepIndex)), 0, 30));
    const calls = plan.steps[request.stepIndex];
    return calls
      ? { type: 'tool_calls', calls: calls.map((c) => ({ tool: c.tool, args: c.args })) }
      : { type: 'final', answer: plan.answer };
  });
}

/** How the soak's approver answers one approval. */
export interface ApproverChoice {
  /** Milliseconds before deciding. */
  delayMs: number;
  /** `approve`, or (for normal approvals only) `reject`, with `terminate` ending the run. */
  decision: 'approve' | 'reject';
  terminate: boolean;
  /** How many decisions are sent: 1, twice one after the other, or 2–3 at once. */
  copies: number;
  concurrent: boolean;
}

/** The seeded choice for an approval (by its id, stable across restarts). */
export function approverChoice(seed: number, approvalId: string, kind: ApprovalKind): ApproverChoice {
  const random = mulberry32(seedOf(seed, 'approve', approvalId));
  const delayMs = between(random, 0, 300);
  const roll = random();
  const reject = kind === 'tool' && roll < 0.08;
  const terminate = reject && random() < 0.35;
  const copies = random();
  if (copies < 0.25)
    return {
      delayMs,
      decision: reject ? 'reject' : 'approve',
      terminate,
      copies: between(random, 2, 3),
      concurrent: true,
    };
  if (copies < 0.4)
    return { delayMs, decision: reject ? 'reject' : 'approve', terminate, copies: 2, concurrent: false };
  return { delayMs, decision: reject ? 'reject' : 'approve', terminate, copies: 1, concurrent: false };
}

/** Seeded pauses inside the world tools, before and after the effect, to widen the crash windows. */
export function soakPauses(seed: number) {
  return (key: string, attempt: number) => {
    const random = mulberry32(seedOf(seed, 'pause', key, attempt));
    return { before: between(random, 0, 60), after: between(random, 0, 60) };
  };
}

/** The lines of a soak child's journal file (none before it exists). */
export function journalOf(file: string): SoakJournalLine[] {
  return readJsonLines<SoakJournalLine>(file);
}
