/**
 * Planners decide a run's next step from its built context. Invariant: a planner has no
 * side effects Baton must protect; its answers are journaled by the runtime per step, so a
 * restored run does not ask again.
 */
export * from './types.js';
export { createScriptedPlanner, type Script } from './scripted-planner.js';
export { createOpenAIPlanner, type ModelPrices, type OpenAIPlannerOptions } from './openai/index.js';
