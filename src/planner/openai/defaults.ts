/** The planner's defaults live with every other default, in src/defaults.ts. */
export { OPENAI_PLANNER_DEFAULTS } from '../../defaults.js';

/** Appended to the messages when the model's reply was empty, before the one retry. */
export const EMPTY_REPLY_NOTE =
  'Your previous reply was empty. Reply with one or more tool calls, or with your final answer as text.';
