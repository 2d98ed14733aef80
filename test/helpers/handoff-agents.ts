/**
 * A triage agent that hands the conversation to a billing agent (`handoff`), which refunds an
 * order (an unsafe effect a person approves) and hands back (`handoff.back`); triage then answers
 * with what billing said. Each refund is a line of the `effects` file (`<order> <idempotency
 * key>`), or an entry of the list, so a test can count them whatever process made them. Each
 * planner records the tools it was offered at each step.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import {
  createScriptedPlanner,
  defineAgent,
  defineTool,
  handoff,
  type PlannerRequest,
  type RuntimeOptions,
} from '../../src/index.js';

/** The last tool observation the planner was shown. */
function lastObservation(request: PlannerRequest): string {
  return request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';
}

/** What billing's refund returned, as the model was shown it. */
function refundOf(request: PlannerRequest): string {
  return request.messages.find((m) => m.role === 'tool' && m.content.includes('refunded'))?.content ?? 'none';
}

/** The tools each agent was offered, by step. */
export type Offered = Map<number, { agent: string; tools: string[] }>;

/** Billing: it refunds order A1 (approved by a person), then hands the conversation back. */
export function billingAgent(effects: string | string[], offered: Offered = new Map()) {
  const refund = defineTool({
    name: 'billing.refund',
    description: 'Refunds an order',
    input: z.object({ order: z.string() }),
    effect: 'unsafe',
    risk: 'high',
    execute: ({ order }, ctx) => {
      if (Array.isArray(effects)) effects.push(order);
      else appendFileSync(effects, `${order} ${ctx.idempotencyKey}\n`);
      return { refunded: order };
    },
  });
  return defineAgent({
    name: 'billing',
    instructions: 'You handle refunds.',
    tools: [refund],
    // Journaled before it is acted on, as a model's answer is (a script's may commit later).
    planner: Object.assign(
      createScriptedPlanner((request) => {
        offered.set(request.stepIndex, { agent: 'billing', tools: request.tools.map((t) => t.name) });
        return lastObservation(request).includes('refunded')
          ? { type: 'tool_calls', calls: [{ tool: 'handoff.back', args: { reason: 'refund done' } }] }
          : { type: 'tool_calls', calls: [{ tool: 'billing.refund', args: { order: 'A1' } }] };
      }),
      { cheap: false },
    ),
  });
}

/** Triage's runtime options on `database`: it hands over at its first step, and answers once handed back. */
export function handoffOptions(
  database: string,
  effects: string | string[],
  offered: Offered = new Map(),
): RuntimeOptions {
  return {
    database,
    agent: 'triage',
    planner: createScriptedPlanner((request) => {
      offered.set(request.stepIndex, { agent: 'triage', tools: request.tools.map((t) => t.name) });
      return request.stepIndex === 0
        ? { type: 'tool_calls', calls: [{ tool: 'handoff.billing', args: { reason: 'a refund' } }] }
        : { type: 'final', answer: `triage: ${refundOf(request)}` };
    }),
    tools: [handoff(billingAgent(effects, offered))],
  };
}
