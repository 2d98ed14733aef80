/**
 * Reading the versioned memory from outside a run (`runtime.memory()`): a session's and its
 * tenant's entries as of a version (the last by default), as a step of a run would read them.
 */
import { z } from 'zod';
import { fail } from '../../failure.js';
import type { Store } from '../../store/index.js';
import { DEFAULT_TENANT, scopeKey } from '../model/tenant-keys.js';
import type { MemoryRequest, MemorySnapshot } from '../model/types.js';

const requestSchema = z
  .object({
    sessionId: z.string().min(1).max(200).optional(),
    tenantId: z.string().min(1).max(200).optional(),
    version: z.number().int().nonnegative().optional(),
  })
  .strict();

/** The memory of a session (when named) and its tenant as of `version`, or the last version. */
export async function readMemorySnapshot(store: Store, request: MemoryRequest = {}): Promise<MemorySnapshot> {
  const parsed = requestSchema.safeParse(request);
  if (!parsed.success) {
    fail('input.invalid', 'Invalid memory request', {
      details: { issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })) },
    });
  }
  const { sessionId, version: asked } = parsed.data;
  const tenant = parsed.data.tenantId ?? DEFAULT_TENANT;
  const last = await store.memoryVersion();
  if (asked !== undefined && asked > last) {
    fail('input.invalid', `Memory version ${asked} does not exist yet: the last is ${last}`, {
      details: { version: asked, last },
    });
  }
  const version = asked ?? last;
  const sessionScope = sessionId === undefined ? null : `session:${scopeKey(tenant, sessionId)}`;
  const tenantScope = `tenant:${tenant}`;
  const snapshot: MemorySnapshot = { version, session: sessionScope === null ? null : {}, tenant: {} };
  const scopes = sessionScope === null ? [tenantScope] : [sessionScope, tenantScope];
  for (const row of await store.readMemory(scopes, version)) {
    if (row.value === null) continue;
    const entries = row.scope === tenantScope ? snapshot.tenant : snapshot.session!;
    entries[row.key] = JSON.parse(row.value) as unknown;
  }
  return snapshot;
}
