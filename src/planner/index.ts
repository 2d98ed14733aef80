/**
 * Planners decide a run's next step from its built context. Invariant: a planner has no
 * side effects Baton must protect; its answers are journaled by the runtime per step, so a
 * restored run does not ask again.
 */
export * from './types.js';
export { createScriptedPlanner, type Script, type ScriptEntry } from './scripted-planner.js';
export {
  createOpenAIPlanner,
  OPENAI_PLANNER_DEFAULTS,
  COMPLETION_LIMIT_FIELDS,
  type CompletionLimitField,
  type ModelPrices,
  type OpenAIPlannerOptions,
  type RetryOptions,
} from './openai/index.js';
