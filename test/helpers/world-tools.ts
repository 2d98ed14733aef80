/**
 * World tools for the crash matrix and the kill soak: every effect class at `low` risk
 * (`world.<effect>`) and at `high` risk (`world.<effect>.high`), all recording into one effects
 * file outside Baton's database in the format of `world.ts`, so `readEffects` counts them.
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool, EFFECTS, type AnyTool, type Effect, type Risk } from '../../src/index.js';
import { readEffects } from './world.js';

/** How the world tools behave besides recording their effect. */
export interface WorldToolOptions {
  /**
   * The crash point inside a tool: right after the first effect of this process, SIGKILL or
   * throw. Its firing is logged to `BATON_FAILPOINTS_LOG` like a failpoint's, as `tool.effect`.
   */
  after?: 'kill' | 'throw' | undefined;
  /** Milliseconds to pause before and after the effect, to widen the crash windows. */
  pause?: ((key: string, attempt: number) => { before: number; after: number }) | undefined;
}

/** The name of the world tool of an effect class and a risk. */
export function worldToolName(effect: Effect, risk: Risk = 'low'): string {
  return risk === 'low' ? `world.${effect}` : `world.${effect}.${risk}`;
}

/** The eight world tools (four effect classes, low and high risk) recording into `file`. */
export function createWorldTools(file: string, options: WorldToolOptions = {}): AnyTool[] {
  let fired = false;
  const afterEffect = () => {
    if (!options.after || fired) return;
    fired = true;
    const log = process.env.BATON_FAILPOINTS_LOG;
    if (log) appendFileSync(log, `tool.effect=${options.after}@1\n`);
    if (options.after === 'kill') process.kill(process.pid, 'SIGKILL');
    throw new Error('Failpoint tool.effect fired');
  };
  const find = (key: string) => readEffects(file).find((e) => e.key === key);
  const make = (effect: Effect, risk: Risk): AnyTool => {
    const name = worldToolName(effect, risk);
    return defineTool({
      name,
      description: `A ${effect}, ${risk}-risk tool that records its effect outside Baton`,
      input: z.object({ value: z.string() }),
      effect,
      risk,
      async execute({ value }, ctx) {
        const pause = options.pause?.(ctx.idempotencyKey, ctx.attempt);
        if (pause?.before) await sleep(pause.before);
        // An API that honours idempotency keys: a repeated key has no second effect.
        const seen = effect === 'idempotent' ? find(ctx.idempotencyKey) : undefined;
        if (!seen)
          appendFileSync(file, JSON.stringify({ tool: name, key: ctx.idempotencyKey, value, pid: process.pid }) + '\n');
        afterEffect();
        if (pause?.after) await sleep(pause.after);
        return { value, replayed: seen !== undefined };
      },
      ...(effect === 'reconcilable'
        ? {
            reconcile: (_input: { value: string }, ctx: { idempotencyKey: string }) => {
              const seen = find(ctx.idempotencyKey);
              return seen
                ? { done: true as const, output: { value: seen.value, replayed: true } }
                : { done: false as const };
            },
          }
        : {}),
    });
  };
  return EFFECTS.flatMap((effect) => [make(effect, 'low'), make(effect, 'high')]);
}
