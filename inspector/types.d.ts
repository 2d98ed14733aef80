/**
 * The shapes the inspector reads from the HTTP API (snake_case, as on the wire) and the shapes
 * of its own event fold. Types only: the page imports nothing from `src/` at run time.
 */
export type { MachineDescription, MachineTransition, MachineState } from '../machines/describe-machine.js';
export type { LogEventType } from '../src/runtime/model/types.js';

export interface UsageJson {
  steps: number;
  llm_calls: number;
  tool_calls: number;
  tokens: number;
  cost_usd: number;
}

export interface FailureJson {
  code: string;
  kind: string;
  message: string;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

/** A schedule, as `GET /v1/schedules` lists it. */
export interface ScheduleJson {
  id: string;
  status: 'active' | 'paused' | 'done';
  cron: string | null;
  timezone: string | null;
  every: number | null;
  at: number | null;
  input: string;
  overlap: string;
  catch_up: string;
  next_at: number | null;
  last_tick_at: number | null;
  last_run_id: string | null;
  runs: number;
  skipped: number;
}

export interface RunJson {
  id: string;
  session_id: string | null;
  status: string;
  stop_reason: string | null;
  failure: FailureJson | null;
  wait_reason: string | null;
  pending_approval_id: string | null;
  metadata: Record<string, string | number | boolean | null>;
  tags: string[];
  pause_requested: { reason: string | null; by: string | null } | null;
  start_at?: number | null;
  pending_input?: PendingInputJson | null;
  input: string;
  answer: string | null;
  context: Record<string, unknown>;
  tenant_id: string | null;
  idempotency_key: string | null;
  usage: UsageJson;
  deadline_at: number | null;
  /** The agent the run belongs to (the one below any handoffs). */
  agent?: { name: string; tools_fingerprint: string | null } | null;
  /** The run this one was forked from, and the first step it ran itself. */
  forked_from?: { run_id: string; step: number } | null;
  /** For a child run (an agent called as a tool): the parent and its call that started it. */
  parent?: { run_id: string; tool_call_id: string } | null;
  /** The child runs this run's agent tools started, oldest first. */
  children?: ChildRunJson[];
  /** While the run waits on a child: the child, and the person's wait down the tree it shows. */
  child_wait?:
    | (ChildRunJson & {
        asking: {
          run_id: string;
          wait_reason: string;
          pending_approval_id: string;
          pending_input: PendingInputJson | null;
          tool_calls: { id: string; tool: string; args: unknown }[];
        } | null;
      })
    | null;
  /** The agents the run's conversation was handed to and not handed back yet, oldest first (the last plans). */
  handoff_stack?: HandoffEntryJson[];
  created_at: number;
  updated_at: number;
}

export interface HandoffEntryJson {
  agent: string;
  step: number;
  tool_call_id: string;
  tools: string[];
  instructions_sha256: string | null;
}

export interface ChildRunJson {
  run_id: string;
  tool_call_id: string;
  agent: string | null;
  status: string;
}

export interface EventJson {
  run_id: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  created_at: number;
}

export interface ApprovalJson {
  id: string;
  run_id: string;
  step_index: number;
  kind: 'tool' | 'uncertain' | 'version' | 'input' | 'budget' | 'policy' | 'repeat' | 'child';
  tool_call_ids: string[];
  args_hash: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  resolution: string | null;
  decided_by: string | null;
  reason: string | null;
  created_at: number;
  decided_at: number | null;
  /** What the wait asks: a question, a budget that ran out, a policy's reason (null for a step's approval). */
  request:
    | {
        kind: 'input';
        question: string;
        choices: string[] | null;
        schema: Record<string, unknown> | null;
        from?: QuestionFromJson;
      }
    | { kind: 'budget'; budget: string; step_index: number; limits: BudgetLimitJson[] }
    | { kind: 'policy'; reason: string | null }
    | { kind: 'pause'; reason: string | null; by: string | null; resume: 'planning' | 'executing'; step_index: number }
    | null;
  role: string;
  expires_at: number | null;
  on_expire: { outcome: 'reject' | 'end' | 'escalate'; role?: string } | null;
  /** What the decider gave: `{ answer }`, `{ edits }`, `{ tool_call_id, output }`, `{ limits, deadline_at }`. */
  answer: Record<string, unknown> | null;
}

/** A question a run waits to have answered. */
export interface PendingInputJson {
  id: string;
  tool_call_id: string;
  question: string;
  choices: string[] | null;
  schema: Record<string, unknown> | null;
  role: string;
  expires_at: number | null;
  /** A tool's question (null: the model's `human.ask`). */
  from: QuestionFromJson | null;
}

/** The tool (and MCP server) that asks a question mid-call; `in_flight`: its call waits open. */
export interface QuestionFromJson {
  tool: string;
  server?: string;
  in_flight: boolean;
}

export interface ToolCallJson {
  id: string;
  step_index: number;
  call_index: number;
  tool: string;
  tool_version: string | null;
  effect: string | null;
  risk: string | null;
  /** For a compensation's row: the id of the call it undoes. */
  compensates: string | null;
  args: unknown;
  /** Set when a person edited the arguments before approving: the model's own, who, why. */
  edited?: { proposed_args: unknown; by: string | null; reason: string | null } | null;
  status: string;
  result: {
    status: string;
    content?: unknown;
    failure?: FailureJson;
    truncated?: boolean;
    artifact?: unknown;
    duration_ms?: number;
  } | null;
  attempts: number;
  started_at: number | null;
  finished_at: number | null;
  /** The handle of work the call left running elsewhere (an MCP task), if it saved one. */
  handle?: unknown;
}

export interface StepJson {
  step_index: number;
  decision: Record<string, unknown>;
  usage: Record<string, unknown>;
  context: Record<string, unknown> | null;
  /** The agent that planned it (the top of the handoff stack then); null for steps from before it was recorded. */
  agent: string | null;
  /** The memory version its planner read (null: its agent has no memory tools). */
  memory_version: number | null;
  created_at: number;
}

export interface SpanJson {
  name: string;
  kind: 'run' | 'plan' | 'tool' | 'approval' | 'compensation';
  started_at: number;
  ended_at: number | null;
  duration_ms: number | null;
  attributes: Record<string, unknown>;
}

export interface TraceJson {
  run: RunJson;
  steps: StepJson[];
  spans: SpanJson[];
}

export type Recovery = 'rerun' | 'reconciled' | 'reconciled_not_done' | 'to_human' | 'human_retry' | 'followed';

export interface FoldCall {
  id: string;
  tool: string;
  args: unknown;
  effect: string | null;
  risk: string | null;
  /** proposed, awaiting_approval, started, succeeded, failed, … as the events tell. */
  status: string;
  attempts: number;
  ok: boolean | null;
  failure: FailureJson | null;
  durationMs: number | null;
  truncated: boolean;
  recovery: Recovery[];
  /** How its compensation went (`started`, `succeeded`, `failed`, `unknown`, `skipped`), once one was asked for. */
  compensation?: string;
}

export interface FoldApproval {
  id: string;
  reason: string;
  toolCalls: { id: string; tool: string; args: unknown; risk: string | null; reason: string | null }[];
  status: string;
  decidedBy: string | null;
  decisionReason: string | null;
  /** Decisions the run's machine took without deciding the approval (a first of two approvers). */
  votes: { by: string | null; decision: string | null; reason: string | null; seq: number }[];
  requestedSeq: number;
  decidedSeq: number | null;
  /** The role that may decide it (after an escalation, the role it was handed to). */
  role: string | null;
  /** When it expires (null: never, or no longer once escalated). */
  expiresAt: number | null;
  /** The role it was first meant for, once an expiry escalated it. */
  escalatedFrom: string | null;
  /** A budget wait: the budget that ran out, at which step, each limit and its use. */
  budget: { budget: string; stepIndex: number; limits: BudgetLimitJson[] } | null;
  /** A question (`input_request`): its text, choices and the JSON Schema of its answer. */
  question: {
    text: string;
    choices: string[] | null;
    schema: Record<string, unknown> | null;
    /** A tool's question: who asks, and whether its call waits open (the run stays `executing`). */
    from?: QuestionFromJson | null;
  } | null;
  /** What the decision did beyond approve / reject: `edit`, `respond`, `extend`, `end`, `answer`. */
  action: string | null;
  /** What the decider gave with it (edits, an output, limits, the answer). */
  given: unknown;
}

/** One limit of a budget wait, and how much of it the run had used (`timeout`: the deadline and now). */
export interface BudgetLimitJson {
  budget: string;
  limit: number | null;
  used: number;
}

export interface FoldState {
  seq: number;
  status: string;
  visited: string[];
  /** `from>to` → how many times the run took that edge. */
  edges: Record<string, number>;
  stepIndex: number;
  stopReason: string | null;
  failure: FailureJson | null;
  waitReason: string | null;
  pendingApprovalId: string | null;
  input: string | null;
  sessionId: string | null;
  limits: Record<string, unknown> | null;
  deadlineAt: number | null;
  answer: string | null;
  usage: { steps: number; llmCalls: number; toolCalls: number; tokens: number; costUsd: number };
  calls: Record<string, FoldCall>;
  approvals: Record<string, FoldApproval>;
  artifacts: { sha256: string; size: number; seq: number }[];
  recoveries: { seq: number; toolCallId: string; tool: string; how: Recovery; cause: string | null }[];
  /** Each `compensation` event: a completed call undone (or left as it is), in log order. */
  compensations: {
    seq: number;
    toolCallId: string;
    compensates: string;
    tool: string;
    status: string;
    reason: string | null;
    failure: FailureJson | null;
  }[];
  /** The report on the run's last `state` event, once a compensation ended. */
  compensation: unknown;
}
