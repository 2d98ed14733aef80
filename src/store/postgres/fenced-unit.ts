/**
 * The common unit of a run as one statement on PostgreSQL: the fence (the run's row locked only
 * if the writer still holds its claim at its epoch), the snapshot's compare-and-set, and the
 * unit's events, ledger rows, steps, approvals and artifacts, each insert gated on the writes
 * before it, plus the notifications, in a single autocommitted round trip. Rows go in as one
 * JSON array per table (`json_populate_recordset` gives them the table's own column types), so a
 * unit of any size has one of a few statement shapes, each a named prepared statement. A run's
 * answer is set by the snapshot's own update, and its messages go in like the other rows, so a
 * run's last unit is one round trip too. Units with other writes (a new run, a decision, a
 * cancel request) take the transaction path.
 */
import type { ArtifactRow, Fence, RunProgress } from '../store-api.js';
import type { RecordedWrite } from './pg-recorder.js';

/**
 * The tables a fast unit inserts into, with what a repeated key does (and the columns it names,
 * for a table whose key the database generates).
 */
const INSERTS: readonly { op: string; table: string; conflict: string; columns?: readonly string[] }[] = [
  { op: 'insertEvent', table: 'events', conflict: '' },
  {
    op: 'putToolCall',
    table: 'tool_calls',
    conflict:
      'on conflict (id) do update set status = excluded.status, result = excluded.result, attempts = excluded.attempts, started_at = excluded.started_at, finished_at = excluded.finished_at, deadline_at = excluded.deadline_at, copied_from = excluded.copied_from, idempotency_key = excluded.idempotency_key, child_run_id = excluded.child_run_id, handle = excluded.handle',
  },
  { op: 'insertStep', table: 'steps', conflict: '' },
  { op: 'insertApproval', table: 'approvals', conflict: '' },
  { op: 'putArtifact', table: 'artifacts', conflict: 'on conflict (sha256) do nothing' },
  { op: 'putArtifactRef', table: 'artifact_refs', conflict: 'on conflict do nothing' },
  {
    op: 'insertMessage',
    table: 'messages',
    conflict: '',
    columns: ['session_id', 'run_id', 'role', 'content', 'created_at'],
  },
];

// A run's answer is set with its snapshot (one update of the row: `setAnswer` goes in only beside a `saveProgress`).
const FAST: ReadonlySet<string> = new Set(['saveProgress', 'setAnswer', ...INSERTS.map((i) => i.op)]);

const PROGRESS_COLUMNS = [
  'snapshot',
  'status',
  'stop_reason',
  'failure',
  'wait_reason',
  'pending_approval_id',
  'step_index',
  'llm_calls',
  'tool_calls',
  'tokens',
  'cost_usd',
  'updated_at',
  'machine_version',
  'compensation',
  'deadline_at',
] as const;

/** A unit's one statement, or null when the unit needs the transaction path. */
export function fencedUnit(
  ops: readonly RecordedWrite[],
  fence: Fence,
  notes: readonly [string, string][],
): { name: string; text: string; values: unknown[]; saves: boolean } | null {
  if (ops.some((op) => !FAST.has(op.name))) return null;
  const saves = ops.filter((op) => op.name === 'saveProgress');
  if (saves.length > 1) return null;
  const answers = ops.filter((op) => op.name === 'setAnswer');
  if (answers.length > 1 || (answers.length === 1 && answers[0]!.values.id !== saves[0]?.values.id)) return null;
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const parts = [
    `fence as (select id from runs where id = ${param(fence.runId)} and owner = ${param(fence.owner)} and epoch = ${param(fence.epoch)}::bigint for update)`,
  ];
  let gate = 'fence';
  let shape = '';
  const save = saves[0]?.values as unknown as RunProgress | undefined;
  if (save) {
    const sets = PROGRESS_COLUMNS.map((column) => `${column} = ${param(save[column])}`);
    if (answers[0]) {
      sets.push(`answer = ${param(answers[0].values.answer)}`);
      shape += 'a';
    }
    const status = param(save.status);
    parts.push(
      `saved as (update runs set ${sets.join(', ')}, wake_at = case when wake_at = 0 and ${status} = 'waiting_human' then 0 else ${param(save.wake_at)}::bigint end, version = version + 1 where id = ${param(save.id)} and version = ${param(save.expected_version)}::bigint and exists (select 1 from fence) returning 1)`,
    );
    gate = 'saved';
    shape += 's';
  }
  for (const [i, insert] of INSERTS.entries()) {
    let rows = ops.filter((op) => op.name === insert.op).map((op) => op.values);
    if (rows.length === 0) continue;
    // An upsert may not touch a row twice in one statement: the last write of a call wins.
    if (insert.op === 'putToolCall') rows = [...new Map(rows.map((row) => [row.id, row])).values()];
    if (insert.op === 'putArtifact') rows = rows.map((row) => toJsonArtifact(row as unknown as ArtifactRow));
    const columns = insert.columns?.join(', ');
    parts.push(
      `w${i} as (insert into ${insert.table}${columns ? ` (${columns})` : ''} select ${columns ?? '*'} from json_populate_recordset(null::${insert.table}, ${param(JSON.stringify(rows))}::json) where exists (select 1 from ${gate}) ${insert.conflict})`,
    );
    shape += `i${i}`;
  }
  const notify = notes.map(
    ([channel, payload]) =>
      `case when exists (select 1 from ${gate}) then pg_notify(${param(channel)}, ${param(payload)}) end`,
  );
  const counts = [
    `(select count(*) from fence)::int as fenced`,
    ...(save ? ['(select count(*) from saved)::int as saved'] : []),
  ];
  return {
    name: `baton_unit_${shape}_${notes.length}`,
    text: `with ${parts.join(', ')} select ${[...counts, ...notify].join(', ')}`,
    values,
    saves: save !== undefined,
  };
}

/** An artifact row as JSON: its bytes in PostgreSQL's hex form for `bytea`. */
function toJsonArtifact(row: ArtifactRow): Record<string, unknown> {
  return { ...row, content: `\\x${Buffer.from(row.content).toString('hex')}` };
}
