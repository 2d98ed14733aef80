/**
 * The agent the server tests run: a scripted planner that reads its orders from the run's input,
 * and two tools that record their effects in a file outside Baton's database.
 *   `hello`               → answers at once
 *   `write:<n>[:<ms>]`    → n steps, each one `notes.write` (idempotent, low risk, waits ms)
 *   `mail`                → `mail.send` (unsafe, high risk: waits for approval), then answers
 *   `draft`               → like `mail`, but after the approval streams two drafts before answering
 */
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createScriptedPlanner, defineTool, type Decision } from '../../src/index.js';
import { readEffects } from './world.js';

/** The tools and planner of the server tests' agent. */
export function createServerAgent(effects: string) {
  const record = (tool: string, key: string, value: string) =>
    appendFileSync(effects, JSON.stringify({ tool, key, value, pid: process.pid }) + '\n');
  const write = defineTool({
    name: 'notes.write',
    description: 'Writes a note (idempotent by key)',
    input: z.object({ value: z.string(), ms: z.number().int().nonnegative().optional() }),
    effect: 'idempotent',
    risk: 'low',
    execute: async ({ value, ms }, ctx) => {
      if (ms) await sleep(ms, undefined, { signal: ctx.signal });
      if (readEffects(effects).some((e) => e.key === ctx.idempotencyKey)) return { value, replayed: true };
      record('notes.write', ctx.idempotencyKey, value);
      return { value, replayed: false };
    },
  });
  const mail = defineTool({
    name: 'mail.send',
    description: 'Sends an email (not idempotent)',
    input: z.object({ to: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ to }, ctx) => {
      record('mail.send', ctx.idempotencyKey, to);
      return { sent: to };
    },
  });
  const planner = createScriptedPlanner((request): Decision => {
    const [order, countText, msText] = request.input.split(':');
    const step = request.stepIndex;
    if (order === 'write') {
      const count = Number(countText ?? 1);
      if (step < count) {
        const args = { value: `${request.runId}#${step}`, ...(msText ? { ms: Number(msText) } : {}) };
        return { type: 'tool_calls', calls: [{ tool: 'notes.write', args }] };
      }
      return { type: 'final', answer: `wrote ${count}` };
    }
    if (order === 'mail' || order === 'draft') {
      if (step === 0) return { type: 'tool_calls', calls: [{ tool: 'mail.send', args: { to: 'ops@example.com' } }] };
      if (order === 'draft') {
        request.onDraft?.('thinking');
        request.onDraft?.('thinking harder');
      }
      const observation = request.messages.findLast((m) => m.role === 'tool');
      return { type: 'final', answer: `mail: ${observation?.content ?? 'none'}` };
    }
    return { type: 'final', answer: 'hi' };
  });
  return { tools: [write, mail], planner };
}
