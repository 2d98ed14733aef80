/**
 * The OpenAI-compatible planner: Chat Completions with tools through the official `openai`
 * client, against OpenAI or any compatible server. Invariants: every failure leaves as a
 * classified `BatonError` (`planner.*`, or `run.cancelled` on abort); retries are bounded and
 * never follow an abort; usage counts every attempt of a step.
 */
export { createOpenAIPlanner, type OpenAIPlannerOptions } from './create-openai-planner.js';
export type { ModelPrices } from './estimate.js';
