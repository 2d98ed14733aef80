/** The run machine's definition as JSON, for inspectors and tools that draw or check it. */
import { runMachine } from './run-machine.js';

/** The run machine's states, events, guards and actors, as plain JSON. */
export function describeMachine(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(runMachine.definition)) as Record<string, unknown>;
}
