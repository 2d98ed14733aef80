// @ts-check
/** The names of the events a run's stream sends, as the page listens for them (no DOM here: tests import it). */

/**
 * Every event name the run streams send (docs/architecture.md §6) but `error`, which is handled on its own.
 * @type {readonly import('./types.js').LogEventType[]}
 */
export const EVENT_NAMES = [
  'run.created',
  'state',
  'step',
  'action',
  'result',
  'approval_request',
  'approval_result',
  'input_request',
  'input_result',
  'artifact',
  'draft',
  'compensation',
  'child',
  'handoff',
  'progress',
  'task',
  'pause',
  'throttled',
];
