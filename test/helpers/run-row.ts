/** A whole `runs` row for store tests that write rows directly: defaults, with what a test sets. */
import type { RunProgress, RunRow } from '../../src/store/index.js';

/** A run row of session `sessionId`; `fields` override the defaults (pending, created now). */
export function runRow(id: string, sessionId: string, fields: Partial<RunRow> = {}): RunRow {
  const now = Date.now();
  return {
    id,
    session_id: sessionId,
    status: 'pending',
    stop_reason: null,
    failure: null,
    wait_reason: null,
    pending_approval_id: null,
    input: 'x',
    context: '{}',
    options: '{}',
    idempotency_key: null,
    tenant_id: null,
    answer: null,
    snapshot: '{}',
    machine_name: 'baton.run',
    machine_version: 2,
    version: 0,
    step_index: 0,
    llm_calls: 0,
    tool_calls: 0,
    tokens: 0,
    cost_usd: 0,
    deadline_at: null,
    cancel_requested: null,
    pause_requested: null,
    metadata: null,
    tags: null,
    compensation: null,
    agent: null,
    agent_tools: null,
    forked_from: null,
    fork: null,
    parent_run_id: null,
    parent_call_id: null,
    queue_order: null,
    wake_at: null,
    epoch: 0,
    owner: null,
    lease_until: null,
    created_at: now,
    updated_at: now,
    ...fields,
  };
}

/** A `saveProgress` of run `id` expecting version `expected`; `fields` override the defaults (executing, step 0). */
export function runProgress(id: string, expected: number, fields: Partial<RunProgress> = {}): RunProgress {
  return {
    id,
    expected_version: expected,
    snapshot: '{}',
    status: 'executing',
    stop_reason: null,
    failure: null,
    wait_reason: null,
    pending_approval_id: null,
    step_index: 0,
    llm_calls: 0,
    tool_calls: 0,
    tokens: 0,
    cost_usd: 0,
    machine_version: 2,
    wake_at: null,
    compensation: null,
    deadline_at: null,
    updated_at: Date.now(),
    ...fields,
  };
}
