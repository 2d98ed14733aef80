/**
 * A small outside world for tests: tools whose effects are recorded in a file outside Baton's
 * database, one per effect class, so tests can count what really happened.
 */
import { appendFileSync } from 'node:fs';
import { readJsonLines } from './json-lines.js';
import { z } from 'zod';
import { defineTool, type Effect, type Risk } from '../../src/index.js';

/** One recorded effect. */
export interface EffectLine {
  tool: string;
  key: string;
  value: string;
  pid: number;
}

/** Every effect recorded in a file. */
export function readEffects(file: string): EffectLine[] {
  return readJsonLines<EffectLine>(file);
}

/** The tools of the world, one per effect class, all recording into `file`. */
export function createWorld(file: string, options: { risk?: Risk; killAfterEffect?: boolean } = {}) {
  const record = (tool: string, key: string, value: string) => {
    appendFileSync(file, JSON.stringify({ tool, key, value, pid: process.pid }) + '\n');
    // A crash right after the effect, before Baton learns the outcome.
    if (options.killAfterEffect) process.kill(process.pid, 'SIGKILL');
  };
  const input = z.object({ value: z.string() });
  const make = (effect: Effect) =>
    defineTool({
      name: `world.${effect}`,
      description: `A ${effect} tool that records its effect outside Baton`,
      input,
      effect,
      risk: options.risk ?? 'low',
      execute: ({ value }, ctx) => {
        if (effect === 'idempotent') {
          // An API that honours idempotency keys: a repeated key has no second effect.
          const seen = readEffects(file).find((e) => e.key === ctx.idempotencyKey);
          if (seen) return { value: seen.value, replayed: true };
        }
        record(`world.${effect}`, ctx.idempotencyKey, value);
        return { value, replayed: false };
      },
      ...(effect === 'reconcilable'
        ? {
            reconcile: (_input: { value: string }, ctx: { idempotencyKey: string }) => {
              const seen = readEffects(file).find((e) => e.key === ctx.idempotencyKey);
              return seen
                ? { done: true as const, output: { value: seen.value, replayed: true } }
                : { done: false as const };
            },
          }
        : {}),
    });
  return {
    read: make('read'),
    idempotent: make('idempotent'),
    reconcilable: make('reconcilable'),
    unsafe: make('unsafe'),
    all: () => [make('read'), make('idempotent'), make('reconcilable'), make('unsafe')],
  };
}
