/**
 * Tool names as the API accepts them: function names must match `^[a-zA-Z0-9_-]{1,64}$`, so
 * `fs.read` goes on the wire as `fs__read` and comes back as `fs.read`.
 */
import { createHash } from 'node:crypto';

const MAX_NAME = 64;

/** Two-way mapping between Baton tool names and the function names sent to the model. */
export interface ToolNames {
  toWire(name: string): string;
  fromWire(wire: string): string;
}

function shorten(value: string, max: number): string {
  if (value.length <= max) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, 8);
  return `${value.slice(0, max - 9)}_${hash}`;
}

/** The function name for a tool name: dots become `__`, other invalid characters `_`. */
export function toFunctionName(name: string): string {
  const wire = name.replaceAll('.', '__').replace(/[^a-zA-Z0-9_-]/g, '_');
  return shorten(wire || '_', MAX_NAME);
}

/** Builds the mapping for one request's tools; names that would collide on the wire get a suffix. */
export function createToolNames(tools: readonly { name: string }[]): ToolNames {
  const toWire = new Map<string, string>();
  const fromWire = new Map<string, string>();
  for (const { name } of tools) {
    let wire = toFunctionName(name);
    for (let n = 2; fromWire.has(wire); n += 1) wire = shorten(`${toFunctionName(name)}_${n}`, MAX_NAME);
    toWire.set(name, wire);
    fromWire.set(wire, name);
  }
  return {
    toWire: (name) => toWire.get(name) ?? toFunctionName(name),
    // An unknown name (a tool the model made up) is decoded as well as possible, so the
    // runtime's `tool.not_found` observation names what the model meant.
    fromWire: (wire) => fromWire.get(wire) ?? wire.replaceAll('__', '.'),
  };
}
