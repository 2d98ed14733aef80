/**
 * The kinds of human wait for the crash tests, each one agent (planner, tools, policy) that every
 * process on a database builds alike, the start options that make its run wait, the decision a
 * person takes, and what the run must then end with. Effects go to a file outside Baton
 * (`world.ts`); the children are started from the build in dist/ (`spawnHumanChild`).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  askHuman,
  createScriptedPlanner,
  defineTool,
  type HumanDecision,
  type PlannerRequest,
  type Runtime,
  type RuntimeOptions,
} from '../../src/index.js';
import { scaled } from './limits.js';
import { REPO_ROOT } from './run-node.js';
import { createWorldTools } from './world-tools.js';

/** Every kind of wait a test kills a process around. */
export const HUMAN_KINDS = ['ask', 'edit', 'respond', 'extend', 'end', 'timeout', 'policy', 'approve'] as const;
/** `more_time`: a `timeout` wait whose next call then waits for an approval (the run's new deadline must survive a restart). */
export type HumanKind = (typeof HUMAN_KINDS)[number] | 'more_time';

/** The start options of a run. */
export type StartOptions = NonNullable<Parameters<Runtime['start']>[0]['options']>;

/** The wait reason a run of each kind stops on. */
export const WAIT_REASON: Record<HumanKind, string> = {
  ask: 'input',
  edit: 'approval',
  respond: 'approval',
  extend: 'budget',
  end: 'budget',
  timeout: 'budget',
  more_time: 'budget',
  policy: 'policy',
  approve: 'approval',
};

/** What the run's one proposed call sends, before any edit. */
export const PROPOSED = 'to everyone';
/** The arguments an `edit` gives instead. */
export const EDITED = 'to the team';
/** The result a `respond` gives instead of running the call. */
export const RESPONSE = { value: 'sent by hand', replayed: false };
/** What a run given more time does with it. */
export const AFTER_MORE_TIME = 'after more time';
/** The deadline of a `timeout` run: its one stalled call outlasts it. */
export const DEADLINE_MS = 300;
/** The choices of the question, and the one answered. */
export const CHOICES = ['ten copies', 'twenty copies'];

const lastMessage = (request: PlannerRequest) => request.messages.at(-1)!.content;

/** The answer a person gave, from the observation of the question (`Answer from <by>:\n<answer>`). */
const answerOf = (request: PlannerRequest) => lastMessage(request).split('\n').at(-1)!;

/** The planner of a kind: the same script in every process (a scripted planner is deterministic). */
function plannerOf(kind: HumanKind) {
  switch (kind) {
    case 'ask':
      // A question, then one effect that carries the answer, then the end.
      return createScriptedPlanner((request) => {
        if (request.stepIndex === 0) return { type: 'ask', question: 'How many copies?', choices: CHOICES };
        if (request.stepIndex === 1) {
          return {
            type: 'tool_calls',
            calls: [{ tool: 'world.unsafe', args: { value: `print ${answerOf(request)}` } }],
          };
        }
        return { type: 'final', answer: `final: ${lastMessage(request)}` };
      });
    case 'extend':
    case 'end':
      // Two steps with an effect each; a budget of one model call stops it before the second.
      return createScriptedPlanner((request) =>
        request.stepIndex < 2
          ? { type: 'tool_calls', calls: [{ tool: 'world.unsafe', args: { value: `v${request.stepIndex}` } }] }
          : { type: 'final', answer: 'done' },
      );
    case 'timeout':
    case 'more_time': {
      // A call that outlasts the run's deadline (it ends only when aborted), then one effect.
      const tool = kind === 'more_time' ? 'world.unsafe.high' : 'world.unsafe';
      return createScriptedPlanner((request) => {
        if (request.stepIndex === 0) return { type: 'tool_calls', calls: [{ tool: 'world.stall', args: {} }] };
        if (request.stepIndex === 1) return { type: 'tool_calls', calls: [{ tool, args: { value: AFTER_MORE_TIME } }] };
        return { type: 'final', answer: 'done' };
      });
    }
    default:
      return createScriptedPlanner((request) =>
        request.stepIndex === 0
          ? { type: 'tool_calls', calls: [{ tool: callTool(kind), args: { value: PROPOSED } }] }
          : { type: 'final', answer: `final: ${lastMessage(request)}` },
      );
  }
}

/** The tool of the one call: high risk where it needs an approval, low where a policy or a budget stops the run. */
function callTool(kind: HumanKind): string {
  return kind === 'edit' || kind === 'respond' || kind === 'approve' ? 'world.unsafe.high' : 'world.unsafe';
}

/** The runtime options of a kind on `database`, recording effects into `effects`. */
export function humanSetup(kind: HumanKind, database: string, effects: string): RuntimeOptions {
  const world = createWorldTools(effects).filter((tool) => tool.name.startsWith('world.unsafe'));
  // A read whose first attempt never answers by itself (the run's deadline cuts it off); run
  // again, once the run has more time, it answers at once.
  const stall = defineTool({
    name: 'world.stall',
    description: 'Waits until it is aborted, the first time',
    input: z.object({}),
    effect: 'read',
    risk: 'low',
    execute: (_input, ctx) =>
      ctx.attempt > 1
        ? 'ready'
        : new Promise<never>((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
  });
  return {
    database,
    planner: plannerOf(kind),
    tools: [...world, stall, askHuman()],
    ...(kind === 'policy'
      ? {
          policy: ({ tool }) =>
            tool.name === 'world.unsafe'
              ? { decision: 'escalate', role: 'admin', reason: 'prints for everyone' }
              : undefined,
        }
      : {}),
  };
}

/** The start options that make a run of `kind` wait. */
export function startOptionsOf(kind: HumanKind): StartOptions {
  if (kind === 'timeout' || kind === 'more_time')
    return { budget: { timeoutMs: DEADLINE_MS }, onBudgetExceeded: 'ask' };
  return kind === 'extend' || kind === 'end' ? { budget: { maxLlmCalls: 1 }, onBudgetExceeded: 'ask' } : {};
}

/** The decision a person takes on the wait of `kind`. */
export function decisionOf(kind: HumanKind, by = 'alice'): HumanDecision {
  switch (kind) {
    case 'ask':
      return { decision: 'answer', by, answer: CHOICES[1] };
    case 'edit':
      return { decision: 'edit', by, args: { value: EDITED }, reason: 'narrower' };
    case 'respond':
      return { decision: 'respond', by, output: RESPONSE, reason: 'done by hand' };
    case 'extend':
      return { decision: 'extend', by, limits: { maxLlmCalls: 5 } };
    case 'end':
      return { decision: 'end', by, reason: 'enough' };
    case 'timeout':
    case 'more_time':
      return { decision: 'extend', by, limits: { timeoutMs: scaled(60_000) } };
    case 'policy':
      return { decision: 'approve', by, reason: 'as admin' };
    case 'approve':
      return { decision: 'approve', by };
  }
}

/** The values the run's effects must carry, in order, each exactly once, once it has ended. */
export function expectedEffects(kind: HumanKind): string[] {
  switch (kind) {
    case 'ask':
      return [`print ${CHOICES[1]}`];
    case 'edit':
      return [EDITED];
    case 'respond':
      return [];
    case 'extend':
      return ['v0', 'v1'];
    case 'end':
      return ['v0'];
    case 'timeout':
    case 'more_time':
      return [AFTER_MORE_TIME];
    default:
      return [PROPOSED];
  }
}

/** The status and stop reason a run of `kind` ends with after its decision. */
export function expectedEnd(kind: HumanKind): { status: string; stopReason: string | null } {
  return kind === 'end'
    ? { status: 'failed', stopReason: 'budget_exceeded' }
    : { status: 'succeeded', stopReason: null };
}

/** What a human-wait child is asked to do (one JSON argument; see `human-child.ts`). */
export interface HumanChildConfig {
  /** `start`: a run to its wait, then idle; `decide`: one decision, then the run to its end; `resume`: the run to its end. */
  phase: 'start' | 'decide' | 'resume';
  kind: HumanKind;
  database: string;
  effects: string;
  runId?: string;
  approvalId?: string;
  /** Start options beyond the kind's own (an expiry). */
  options?: StartOptions;
  /** The decision to take, when not the kind's own. */
  decision?: HumanDecision;
  /** `decide` waits for this file to exist before deciding (several deciders at one moment). */
  goFile?: string;
  leaseMs?: number;
  claimEveryMs?: number;
}

/** A running child: the JSON lines it printed, how it ended, and a SIGKILL. */
export interface HumanChild {
  pid: number;
  lines(): Record<string, unknown>[];
  /** The first line of `type`, once printed. */
  line(type: string): Record<string, unknown> | undefined;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILLs it (if still running); resolves with how it ended. */
  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const CHILD = fileURLToPath(new URL('./human-child.ts', import.meta.url));
const DIST_SOURCES = fileURLToPath(new URL('./dist-sources.js', import.meta.url));

/**
 * Starts a human-wait child on Baton's build in dist/ (the child's TypeScript goes through tsx,
 * Baton's modules resolve to dist/), with `failpoints` armed and logged to `failpointLog`.
 */
export function spawnHumanChild(
  config: HumanChildConfig,
  failpoints: { spec?: string; log?: string } = {},
): HumanChild {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (/^(OPENAI_|BATON_FAILPOINTS)/.test(name)) delete env[name];
  if (failpoints.spec) env.BATON_FAILPOINTS = failpoints.spec;
  if (failpoints.log) env.BATON_FAILPOINTS_LOG = failpoints.log;
  const proc = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), '--import', DIST_SOURCES, CHILD, JSON.stringify(config)],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('close', (code, signal) => resolve({ code, signal })),
  );
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{') && l.endsWith('}'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    pid: proc.pid!,
    lines,
    line: (type) => lines().find((l) => l.type === type),
    stderr: () => stderr,
    exited,
    kill: () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      return exited;
    },
  };
}
