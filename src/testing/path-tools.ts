/**
 * The tools a model path runs with, each with an effect the harness records outside Baton's
 * database (`tool:idempotency key`), so a check can tell whether it happened, and how often.
 */
import { z } from 'zod';
import type { Risk } from '../../machines/types.js';
import type { WaitExpiryOptions } from '../runtime/model/types.js';
import { defineTool, type AnyTool } from '../tools/define-tool.js';
import { askHuman } from '../tools/human-ask.js';

/** What makes a path's tools differ from one path to the next: the one wait that expires, if any. */
export interface PathToolTerms {
  /** The expiry of the `timed` tool's approval, and its risk (`destructive` asks through the policy). */
  timed?: { risk: Risk; terms: WaitExpiryOptions };
  /** The expiry of every question (`human.ask`). */
  ask?: WaitExpiryOptions;
}

/**
 * The tools of a path; `record` notes an effect, `startedFragile` the fragile call's first
 * attempt, `taskEnded` whether the path let a call's work elsewhere end (the `remote` tool's).
 */
export function createPathTools(
  terms: PathToolTerms,
  record: (tool: string, key: string) => void,
  startedFragile: () => void,
  taskEnded: (toolCallId: string) => boolean,
): AnyTool[] {
  const input = z.object({ n: z.number() });
  const effectful = (name: string, description: string, risk: Risk, extra: WaitExpiryOptions = {}) =>
    defineTool({
      name,
      description,
      input,
      effect: 'idempotent',
      risk,
      ...extra,
      execute: ({ n }, ctx) => {
        record(name, ctx.idempotencyKey);
        return { n };
      },
    });
  return [
    defineTool({ name: 'ok', description: 'reads', input, effect: 'read', risk: 'low', execute: ({ n }) => ({ n }) }),
    effectful('guarded', 'an idempotent effect that needs approval', 'high'),
    effectful(
      'destroy',
      'a destructive idempotent effect: the policy asks a human instead of denying it',
      'destructive',
    ),
    effectful(
      'timed',
      'an idempotent effect whose approval expires',
      terms.timed?.risk ?? 'high',
      terms.timed?.terms ?? {},
    ),
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
    defineTool({
      name: 'remote',
      description: 'starts work elsewhere (a task) and lets go of the call; the work ends when the path says',
      input,
      effect: 'idempotent',
      risk: 'low',
      execute: async ({ n }, ctx) => {
        if (!ctx.handle) {
          record('remote', ctx.idempotencyKey);
          await ctx.saveHandle?.({ task: ctx.idempotencyKey, n });
        }
        ctx.detach?.({ pollAfterMs: 0 });
        return { n };
      },
      pollHandle: async (handle, ctx) => {
        const { n } = handle as { n: number };
        return taskEnded(ctx.toolCallId) ? { done: true, output: { n } } : { done: false };
      },
    }),
    askHuman(terms.ask ?? {}),
  ];
}
