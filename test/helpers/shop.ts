/**
 * A small shop for compensation tests: tools whose effects (and the compensations that undo
 * them) are journaled to a JSONL file outside Baton's database, so a test can count what really
 * happened and in which order, across processes.
 * - `shop.charge` (idempotent): charges; compensated by a refund (idempotent, once per key);
 * - `shop.archive` (idempotent): archives an order; compensated by a restore (reconcilable: the
 *   journal says whether the restore happened);
 * - `shop.notify` (unsafe): sends a message; no compensator;
 * - `shop.lookup` (read); `shop.delete` (idempotent, high risk: a human approves).
 */
import { appendFileSync } from 'node:fs';
import { readJsonLines } from './json-lines.js';
import { z } from 'zod';
import { defineTool, ToolFailedError, type AnyTool, type ToolContext } from '../../src/index.js';

export interface ShopLine {
  kind: 'charge' | 'refund' | 'archive' | 'restore' | 'notify' | 'delete' | 'undo_call';
  tool: string;
  key: string;
  /** For an `undo_call`: the attempt, and the call it undoes (`ctx.compensates`). */
  attempt?: number;
  of?: string;
  order?: string;
  pid: number;
}

export interface ShopOptions {
  /** The refund's compensator fails: with `ToolFailedError` (known), or a plain throw (unknown outcome). */
  failRefund?: 'failed' | 'throw';
  /** This compensator hangs forever after its effect, on its first attempt (a SIGKILL comes). */
  hangAfterUndo?: 'shop.charge' | 'shop.archive';
}

export function readShop(file: string): ShopLine[] {
  return readJsonLines<ShopLine>(file);
}

export function createShop(file: string, options: ShopOptions = {}): AnyTool[] {
  const log = (line: Omit<ShopLine, 'pid'>) =>
    appendFileSync(file, `${JSON.stringify({ ...line, pid: process.pid })}\n`);
  const done = (kind: ShopLine['kind'], key: string) => readShop(file).some((l) => l.kind === kind && l.key === key);
  /** An effect keyed by the call's idempotency key happens once, however often it is asked. */
  const once = (kind: ShopLine['kind'], tool: string, ctx: ToolContext, order: string) => {
    if (!done(kind, ctx.idempotencyKey)) log({ kind, tool, key: ctx.idempotencyKey, order });
  };
  const hang = (tool: string, ctx: ToolContext) =>
    options.hangAfterUndo === tool && ctx.attempt === 1 ? new Promise<never>(() => undefined) : undefined;
  const order = z.object({ order: z.string() });
  return [
    defineTool({
      name: 'shop.charge',
      description: 'Charge an order',
      input: order,
      effect: 'idempotent',
      risk: 'low',
      execute: ({ order: o }, ctx) => {
        once('charge', 'shop.charge', ctx, o);
        return { charged: o };
      },
      compensate: async ({ order: o }, output, ctx) => {
        log({
          kind: 'undo_call',
          tool: 'shop.charge',
          key: ctx.idempotencyKey,
          attempt: ctx.attempt,
          order: o,
          of: ctx.compensates,
        });
        if (options.failRefund === 'failed') throw new ToolFailedError(`the bank refused the refund of ${o}`);
        if (options.failRefund === 'throw') throw new Error(`refund service crashed for ${o}`);
        once('refund', 'shop.charge', ctx, o);
        await hang('shop.charge', ctx);
        return { refunded: (output as { charged: string }).charged };
      },
    }),
    defineTool({
      name: 'shop.archive',
      description: 'Archive an order',
      input: order,
      effect: 'idempotent',
      risk: 'low',
      execute: ({ order: o }, ctx) => {
        once('archive', 'shop.archive', ctx, o);
        return `archived ${o}`;
      },
      compensateEffect: 'reconcilable',
      compensate: async ({ order: o }, _output, ctx) => {
        log({
          kind: 'undo_call',
          tool: 'shop.archive',
          key: ctx.idempotencyKey,
          attempt: ctx.attempt,
          order: o,
          of: ctx.compensates,
        });
        once('restore', 'shop.archive', ctx, o);
        await hang('shop.archive', ctx);
        return `restored ${o}`;
      },
      reconcileCompensation: ({ order: o }, _output, ctx) =>
        done('restore', ctx.idempotencyKey) ? { done: true, output: `restored ${o}` } : { done: false },
    }),
    defineTool({
      name: 'shop.notify',
      description: 'Tell the customer',
      input: order,
      effect: 'unsafe',
      risk: 'low',
      execute: ({ order: o }, ctx) => {
        log({ kind: 'notify', tool: 'shop.notify', key: ctx.idempotencyKey, order: o });
        return 'sent';
      },
    }),
    defineTool({
      name: 'shop.lookup',
      description: 'Look an order up',
      input: order,
      effect: 'read',
      risk: 'low',
      execute: ({ order: o }) => ({ order: o, state: 'open' }),
    }),
    defineTool({
      name: 'shop.delete',
      description: 'Delete an order',
      input: order,
      effect: 'idempotent',
      risk: 'high',
      execute: ({ order: o }, ctx) => {
        once('delete', 'shop.delete', ctx, o);
        return `deleted ${o}`;
      },
    }),
  ];
}

/** The script of a shop run: charge, archive + lookup, notify, charge again, then a deletion a human must approve. */
export const SHOP_SCRIPT = [
  { type: 'tool_calls' as const, calls: [{ tool: 'shop.charge', args: { order: 'A' } }] },
  {
    type: 'tool_calls' as const,
    calls: [
      { tool: 'shop.archive', args: { order: 'A' } },
      { tool: 'shop.lookup', args: { order: 'A' } },
    ],
  },
  { type: 'tool_calls' as const, calls: [{ tool: 'shop.notify', args: { order: 'A' } }] },
  { type: 'tool_calls' as const, calls: [{ tool: 'shop.charge', args: { order: 'B' } }] },
  { type: 'tool_calls' as const, calls: [{ tool: 'shop.delete', args: { order: 'A' } }] },
  { type: 'final' as const, answer: 'done' },
];
