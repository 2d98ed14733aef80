/**
 * `memory.read` and `memory.write`: built-in tools over a small versioned memory, one per session
 * and one per tenant. The runtime runs them itself: a write is a new version, committed with the
 * call's ledger row (once, whatever crashes); a read reads the version the step's planner read
 * (recorded with the step), so a resumed or forked run reads what it read before, not a newer
 * one. An agent with either tool is also shown its memory at each step.
 */
import { z } from 'zod';
import { fail } from '../failure.js';
import { defineTool, type AnyTool } from './define-tool.js';

/** The names of the memory tools. */
export const MEMORY_READ = 'memory.read';
export const MEMORY_WRITE = 'memory.write';

/** Whose memory: the run's session's (default), or its tenant's (shared by its sessions). */
export const MEMORY_SCOPES = ['session', 'tenant'] as const;
export type MemoryScope = (typeof MEMORY_SCOPES)[number];

const scope = z.enum(MEMORY_SCOPES).default('session').describe("Whose memory: this conversation's, or the tenant's");
const key = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\w.:/-]+$/, 'letters, digits and . _ : / - only')
  .describe('The entry, e.g. "customer.name"');

const readInput = z
  .object({
    scope,
    key: key.optional().describe('One entry; without it, every entry of the scope'),
  })
  .strict();

const writeInput = z
  .object({
    scope,
    key,
    value: z.unknown().describe('Any JSON; null deletes the entry'),
  })
  .strict();

export type MemoryReadInput = z.infer<typeof readInput>;
export type MemoryWriteInput = z.infer<typeof writeInput>;

/** Options of `memoryTools()`. */
export interface MemoryToolsOptions {
  /** The scopes the model may use (default both). */
  scopes?: readonly MemoryScope[];
  /** The largest value a write may store, as JSON (default 16 KiB). */
  maxValueBytes?: number;
}

/** What a memory tool carries for the runtime, which runs it. */
export interface MemoryAccess {
  kind: 'read' | 'write';
  scopes: readonly MemoryScope[];
  maxValueBytes: number;
}

/**
 * The memory tools, for an agent's tools: `memory.read` and `memory.write`.
 * @example defineAgent({ name: 'support', tools: [...memoryTools(), lookup], planner })
 */
export function memoryTools(options: MemoryToolsOptions = {}): AnyTool[] {
  const scopes = options.scopes ?? MEMORY_SCOPES;
  if (scopes.length === 0) fail('input.invalid', 'memoryTools() needs at least one scope');
  const access = { scopes, maxValueBytes: options.maxValueBytes ?? 16_384 };
  const only = scopes.length === 1 ? ` (${scopes[0]} scope only)` : '';
  const never = (name: string) => () => fail('internal.error', `'${name}' is run by the runtime, never in place`);
  const read = defineTool({
    name: MEMORY_READ,
    description: `Read remembered entries${only}: one by key, or all of a scope. What you read is the memory as it was when this step was planned, with this step's own writes.`,
    input: readInput,
    effect: 'read',
    risk: 'low',
    allowEdit: false,
    execute: never(MEMORY_READ),
  });
  const write = defineTool({
    name: MEMORY_WRITE,
    description: `Remember an entry${only} (a new version of the memory); a null value forgets it.`,
    input: writeInput,
    effect: 'idempotent',
    risk: 'low',
    execute: never(MEMORY_WRITE),
  });
  return [
    Object.assign(read, { memory: { kind: 'read', ...access } satisfies MemoryAccess }) as AnyTool,
    Object.assign(write, { memory: { kind: 'write', ...access } satisfies MemoryAccess }) as AnyTool,
  ];
}

/** The memory access a tool carries, if it is a memory tool. */
export function memoryAccessOf(tool: AnyTool | undefined): MemoryAccess | undefined {
  return (tool as { memory?: MemoryAccess } | undefined)?.memory;
}
