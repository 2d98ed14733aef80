/**
 * The per-key limits of a tool's calls and of planner calls (docs/architecture.md §4.13): the
 * gates each must pass (`drive/limiter.ts`), and the `throttled` events that make a call waiting
 * at one visible.
 */
import type { ConcurrencyLimit, RateLimit, RunUserContext, AnyTool } from '../../tools/define-tool.js';
import type { LimitGate, Passed, PlannerLimitInput, PlannerLimits, Throttle } from '../drive/limiter.js';
import type { LiveRun, RuntimeEnv } from '../drive/env.js';

/** A key as stored in a limit's scope: text, empty for "one key for all"; anything else is a mistake. */
function keyText(key: unknown, where: string): string {
  if (key === null || key === undefined) return '';
  if (typeof key === 'string' || (typeof key === 'number' && Number.isFinite(key))) return String(key);
  throw new Error(`${where}.key must return a string or a number (or nothing), not ${typeof key}`);
}

/** The gates of a call or a planner call, for the limits it has, each on its own key. */
function gatesOf<I>(
  prefix: string,
  limits: { concurrency?: ConcurrencyLimit<I> | undefined; rate?: RateLimit<I> | undefined },
  input: I,
  ctx: { runId: string; context: RunUserContext },
): LimitGate[] {
  const gates: LimitGate[] = [];
  const { concurrency, rate } = limits;
  if (concurrency) {
    const key = keyText(concurrency.key?.(input, ctx), 'concurrency');
    gates.push({ kind: 'concurrency', scope: `${prefix}:c:${key}`, key, limit: concurrency.limit });
  }
  if (rate) {
    // Its own scope: a key's rate and its slots are kept apart.
    const key = keyText(rate.key?.(input, ctx), 'rate');
    gates.push({ kind: 'rate', scope: `${prefix}:r:${key}`, key, limit: rate.limit, intervalMs: rate.intervalMs });
  }
  return gates;
}

/** The gates a tool's call passes (none for a tool without limits); a key function that throws throws. */
export function toolGates(tool: AnyTool, input: unknown, ctx: { runId: string; context: RunUserContext }): LimitGate[] {
  if (!tool.concurrency && !tool.rate) return [];
  return gatesOf(`tool:${tool.name}`, tool, input, ctx);
}

/** The gates of a planner call of `agent` (none without planner limits). */
export function plannerGates(limits: PlannerLimits | undefined, input: PlannerLimitInput): LimitGate[] {
  if (!limits || (!limits.concurrency && !limits.rate)) return [];
  return gatesOf('planner', limits, input, input);
}

/** The `throttled` event of a call waiting at a gate. */
export function throttledData(throttle: Throttle, who: Record<string, unknown>): Record<string, unknown> {
  return {
    ...who,
    limit: throttle.why,
    key: throttle.key,
    scope: throttle.scope,
    retry_in_ms: Math.round(throttle.waitMs),
  };
}

/**
 * Passes the gates for `holder`, telling the run's log once each time the reason to wait changes
 * (committed, so a reader sees the call waiting); null when the run left the step first.
 */
export async function passGates(
  env: RuntimeEnv,
  live: LiveRun,
  gates: LimitGate[],
  holder: string,
  signal: AbortSignal,
  who: Record<string, unknown>,
): Promise<Passed | null> {
  let told: string | null = null;
  return env.limiter.pass(gates, holder, signal, async (throttle) => {
    const reason = `${throttle.why} ${throttle.scope}`;
    if (reason === told || signal.aborted) return;
    told = reason;
    live.driver.emit('throttled', throttledData(throttle, who));
    await live.driver.flush();
  });
}
