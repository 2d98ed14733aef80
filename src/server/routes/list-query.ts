/**
 * The query of `GET /v1/runs` as a runtime list filter: `status`, `session_id`, `forked_from`,
 * `parent_run_id`, `failure_code`, `created_after` / `created_before` (ms or ISO 8601),
 * `metadata.<key>=<value>` (each entry; values matched as text), `tag` (repeatable), `limit`,
 * `cursor`; a caller who is not in dev mode sees its own tenant's runs only.
 */
import { z } from 'zod';
import { fail } from '../../failure.js';
import { LISTED_STATUSES, type RunListFilter } from '../../index.js';
import type { Principal } from '../auth/principal.js';
import { parseInput } from '../read-body.js';

const listQuerySchema = z.strictObject({
  status: z.enum(LISTED_STATUSES).optional(),
  session_id: z.string().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().min(1).optional(),
  /** Only the forks of this run. */
  forked_from: z.string().min(1).max(300).optional(),
  /** Only the child runs this run's agent tools started. */
  parent_run_id: z.string().min(1).max(1000).optional(),
  /** Only runs whose failure has this code (`tool.failed`). */
  failure_code: z.string().min(1).max(100).optional(),
  /** Only runs created at or after / before an instant: milliseconds since the epoch or an ISO 8601 time. */
  created_after: z.string().min(1).max(40).optional(),
  created_before: z.string().min(1).max(40).optional(),
});

/** An instant of a query: milliseconds since the epoch, or an ISO 8601 date and time. */
function instantOf(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const at = /^\d+$/.test(text) ? Number(text) : /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isSafeInteger(at)) {
    fail('input.invalid', `Invalid ${name} '${text}': milliseconds since the epoch or an ISO 8601 time`, {
      details: { [name]: text },
    });
  }
  return at;
}

/** The `metadata.<key>=<value>` parameters of a query, as a metadata filter (values as text). */
function metadataOf(query: Record<string, string>): Record<string, string> | undefined {
  const entries = Object.entries(query).filter(([name]) => name.startsWith('metadata.'));
  return entries.length === 0 ? undefined : Object.fromEntries(entries.map(([name, value]) => [name.slice(9), value]));
}

/**
 * The runtime's list filter for a query (each parameter with all its values) sent by `principal`.
 * An unknown parameter or one given twice is `input.invalid`, as the runtime's own filters are.
 */
export function listFilterOf(raw: Record<string, string[]>, principal: Principal): RunListFilter {
  const twice = Object.entries(raw).find(([name, values]) => name !== 'tag' && values.length > 1);
  if (twice)
    fail('input.invalid', `Query parameter '${twice[0]}' is given more than once`, {
      details: { parameter: twice[0] },
    });
  const firsts = Object.entries(raw).map(([name, values]) => [name, values[0] ?? ''] as const);
  // A metadata entry's value may be empty; any other `?status=&session_id=` means no filter, as a form would send it.
  const metadata = metadataOf(Object.fromEntries(firsts.filter(([name]) => name.startsWith('metadata.'))));
  const given = firsts.filter(([, value]) => value !== '');
  const tags = raw.tag ?? [];
  const query = parseInput(
    listQuerySchema,
    Object.fromEntries(given.filter(([name]) => !name.startsWith('metadata.') && name !== 'tag')),
    'query',
  );
  const tagged = tags.filter((tag) => tag !== '');
  const createdAfter = instantOf('created_after', query.created_after);
  const createdBefore = instantOf('created_before', query.created_before);
  return {
    ...(metadata ? { metadata } : {}),
    ...(tagged.length > 0 ? { tags: tagged } : {}),
    ...(query.failure_code ? { failureCode: query.failure_code } : {}),
    ...(createdAfter !== undefined ? { createdAfter } : {}),
    ...(createdBefore !== undefined ? { createdBefore } : {}),
    ...(query.status ? { status: query.status } : {}),
    ...(query.session_id ? { sessionId: query.session_id } : {}),
    // Dev mode sees every tenant's runs; a session id is still the default tenant's.
    ...(principal.allTenants ? {} : { tenantId: principal.tenant }),
    ...(query.limit ? { limit: query.limit } : {}),
    ...(query.cursor ? { cursor: query.cursor } : {}),
    ...(query.forked_from ? { forkedFrom: query.forked_from } : {}),
    ...(query.parent_run_id ? { parentRunId: query.parent_run_id } : {}),
  };
}
