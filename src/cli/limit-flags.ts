/**
 * The limit flags of `baton serve` and `baton worker`: the most runs of one tenant in flight, and
 * the model API's limits per tenant (docs/architecture.md §4.13). A tool's own limits are its
 * module's (`defineTool({ concurrency, rate })`).
 */
import type { RuntimeLimits } from '../runtime/index.js';
import { toDurationMs } from './duration.js';
import { toPositiveInt } from './parse-flags.js';
import { usageError } from './cli-error.js';

/** The model's limit flags, for a command's `options` (a worker's: it starts no runs). */
export const MODEL_LIMIT_FLAGS = {
  'model-concurrency': { type: 'string' },
  'model-rate': { type: 'string' },
} as const;

/** Every limit flag, for a command's `options` (a server's). */
export const LIMIT_FLAGS = { 'runs-per-tenant': { type: 'string' }, ...MODEL_LIMIT_FLAGS } as const;

/** The model's limits in a command's usage text (a worker's: it starts no runs). */
export const WORKER_LIMIT_USAGE = `  --model-concurrency <n>  at most n planner calls of one tenant at once, across every
                    process on the database
  --model-rate <n>/<d>  at most n planner calls of one tenant in any window of d (60/1m, 5/1s)`;

/** Every limit flag in a command's usage text (a server's). */
export const LIMIT_USAGE = `  --runs-per-tenant <n>  at most n runs of one tenant in flight (pending to waiting_human); a
                    start over it is refused with 429 run.tenant_limit
${WORKER_LIMIT_USAGE}`;

/** The tenant of a run, the key of the model's limits. */
const byTenant = ({ context }: { context: { tenant_id?: string | undefined } }) => context.tenant_id ?? null;

/** `<n>/<duration>`: n calls per window. */
function toRate(value: string): { limit: number; intervalMs: number } {
  const [count, window, ...rest] = value.split('/');
  if (count === undefined || window === undefined || rest.length > 0) {
    throw usageError(`--model-rate must be <calls>/<duration> (60/1m), not '${value}'`);
  }
  const intervalMs = toDurationMs(window, '--model-rate');
  if (!(intervalMs > 0)) throw usageError(`--model-rate needs a window longer than 0, not '${window}'`);
  return { limit: toPositiveInt(count, '--model-rate')!, intervalMs };
}

/** The runtime's limits from the flags given (undefined when none is). */
export function limitsOf(values: Partial<Record<keyof typeof LIMIT_FLAGS, string>>): RuntimeLimits | undefined {
  const runsPerTenant = toPositiveInt(values['runs-per-tenant'], '--runs-per-tenant');
  const concurrency = toPositiveInt(values['model-concurrency'], '--model-concurrency');
  const rate = values['model-rate'] === undefined ? undefined : toRate(values['model-rate']);
  if (runsPerTenant === undefined && concurrency === undefined && rate === undefined) return undefined;
  return {
    ...(runsPerTenant !== undefined ? { runsPerTenant } : {}),
    ...(concurrency !== undefined || rate
      ? {
          planner: {
            ...(concurrency !== undefined ? { concurrency: { limit: concurrency, key: byTenant } } : {}),
            ...(rate ? { rate: { ...rate, key: byTenant } } : {}),
          },
        }
      : {}),
  };
}

/** The limits in force, for a command's start-up report. */
export function describeLimits(values: Partial<Record<keyof typeof LIMIT_FLAGS, string>>): string {
  const of = (n: string, what: string) => `${n} ${what}${n === '1' ? '' : 's'}`;
  const runs = values['runs-per-tenant'];
  const concurrency = values['model-concurrency'];
  const [calls, window] = values['model-rate']?.split('/') ?? [];
  const parts = [
    runs ? `${of(runs, 'run')} in flight per tenant` : null,
    concurrency ? `${of(concurrency, 'planner call')} at once per tenant` : null,
    calls && window ? `${of(calls, 'planner call')} per ${window} per tenant` : null,
  ].filter((part) => part !== null);
  return parts.length > 0
    ? `at most ${parts.join('; ')}`
    : 'none (see --runs-per-tenant, --model-concurrency, --model-rate)';
}
