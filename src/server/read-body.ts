/** Reading a request's JSON body: malformed JSON and schema violations answer 400 `input.invalid` with the issues. */
import type { Context } from 'hono';
import type { z } from 'zod';
import { BatonError, createFailure } from '../failure.js';
import { illFormedPath } from '../runtime/index.js';

/** The body parsed by `schema`; an empty body is read as `undefined` so optional bodies can default. */
export async function readBody<T extends z.ZodType>(c: Context, schema: T): Promise<z.output<T>> {
  const text = await c.req.text();
  let value: unknown;
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw invalid(`The request body is not valid JSON: ${reason}`);
    }
  }
  const depth = depthOf(value);
  if (depth > MAX_DEPTH) {
    throw invalid(`The request body nests deeper than ${MAX_DEPTH} levels`, { limit: MAX_DEPTH });
  }
  // Named in the body's own (snake_case) terms, before anything renames its fields.
  const illFormed = illFormedPath(value);
  if (illFormed !== null) {
    throw invalid(`The request body holds ill-formed text (a lone UTF-16 surrogate) at ${illFormed}`, {
      path: illFormed,
    });
  }
  return parseInput(schema, value, 'request body');
}

/** How deep a request body may nest: deeper JSON is refused before anything walks it recursively. */
export const MAX_DEPTH = 32;

/** The nesting depth of a parsed JSON value, counted without recursion (it stops one past the limit). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_DEPTH) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** `value` parsed by `schema`, or 400 `input.invalid` with zod's issues. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map(({ code, path, message }) => ({ code, path, message }));
  const first = issues[0];
  const where = first && first.path.length > 0 ? ` at '${first.path.join('.')}'` : '';
  throw invalid(`Invalid ${what}${where}: ${first?.message ?? 'invalid'}`, { issues });
}

function invalid(message: string, details?: Record<string, unknown>): BatonError {
  return new BatonError(createFailure('input.invalid', message, details ? { details } : {}));
}
