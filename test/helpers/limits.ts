/**
 * Time limits that scale with the machine. Every limit a test or helper waits with is an upper
 * bound on something that should happen (a child starting, a run settling), never the time it
 * is expected to take; on a loaded machine everything takes longer, which must make the suite
 * slower, not red. `scaled(ms)` is such a limit on this machine.
 *
 * The factor is `BATON_TEST_SLOWDOWN` when set (a number > 0); otherwise 3 under CI or when the
 * load average already reaches the number of CPUs as the run starts, else 1. `vitest.config.ts`
 * decides it once and exports it to the workers, so every file of a run uses the same one.
 */
import { availableParallelism, loadavg } from 'node:os';

function slowdown(): number {
  const given = process.env.BATON_TEST_SLOWDOWN;
  if (given !== undefined && given !== '') {
    const factor = Number(given);
    if (!Number.isFinite(factor) || factor <= 0) {
      throw new Error(`BATON_TEST_SLOWDOWN must be a number > 0, not '${given}'`);
    }
    return factor;
  }
  const loaded = (loadavg()[0] ?? 0) >= availableParallelism();
  return process.env.CI || loaded ? 3 : 1;
}

/** How much longer than on an idle machine a limit is. */
export const SLOWDOWN = slowdown();

/** A time limit of `ms` on an idle machine, scaled for this one. */
export function scaled(ms: number): number {
  return Math.round(ms * SLOWDOWN);
}
