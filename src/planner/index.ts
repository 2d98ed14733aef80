/**
 * Planners decide a run's next step from its built context. Invariant: a planner has no
 * side effects Baton must protect; its answers are journaled by the runtime per step, so a
 * restored run does not ask again.
 */
export * from './types.js';
export { createScriptedPlanner, type Script, type ScriptEntry } from './scripted-planner.js';
