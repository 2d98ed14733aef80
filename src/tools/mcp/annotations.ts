/**
 * MCP tool annotations → Baton's safety model. The annotations are hints (the spec says a client
 * must not trust them from an untrusted server), so a missing hint takes the spec's cautious
 * default: not read-only, not idempotent, destructive, open-world. The application can override
 * any part of the result by tool name.
 */
import type { Effect, Risk } from '../define-tool.js';

/** The hints of MCP's `ToolAnnotations` that decide safety. */
export interface McpAnnotations {
  readOnlyHint?: boolean | undefined;
  destructiveHint?: boolean | undefined;
  idempotentHint?: boolean | undefined;
  openWorldHint?: boolean | undefined;
  [key: string]: unknown;
}

/** What a tool runs as in Baton. */
export interface SafetyMapping {
  effect: Effect;
  risk: Risk;
  /** False when the tool reaches an open world: its output then makes the policy stricter. */
  trustedOutput: boolean;
}

/**
 * Maps annotations with the spec's defaults for missing hints:
 * - `readOnlyHint: true` → effect `read`, risk `low` (nothing to protect, nothing to approve);
 * - otherwise `idempotentHint: true` → effect `idempotent` (rerun with the same key), else `unsafe`;
 *   `destructiveHint` (default true) → risk `high` (a human approves), false → `low`;
 * - `openWorldHint` (default true) → the output is untrusted; and a read-only tool's output is
 *   untrusted even in a closed world (it is content: a file, a resource, which may carry
 *   instructions), unless an override says `trustedOutput: true`.
 * No annotations at all therefore gives `unsafe`, `high`, untrusted.
 */
export function mapAnnotations(annotations: McpAnnotations | null | undefined): SafetyMapping {
  const hints = annotations ?? {};
  // A closed world vouches for what a tool does, not for what it reads: a read-only tool returns
  // content (a file, a resource) that anyone may have written, so it is untrusted unless the
  // application says otherwise (`overrides`).
  const trustedOutput = hints.openWorldHint === false && hints.readOnlyHint !== true;
  if (hints.readOnlyHint === true) return { effect: 'read', risk: 'low', trustedOutput };
  return {
    effect: hints.idempotentHint === true ? 'idempotent' : 'unsafe',
    risk: hints.destructiveHint === false ? 'low' : 'high',
    trustedOutput,
  };
}
