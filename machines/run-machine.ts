/**
 * The run machine: six public states, the events of docs/architecture.md §3, and the invoked actors
 * (`planner`, `executor`, `deadline`, and `timer` for variants' durable delays) that are
 * declared here by name and supplied by the runtime with `machine.provide()`. It is pure: no
 * I/O, no clients, JSON-only context.
 */
import { and, assign, fromCallback, fromPromise, raise, setup } from 'xstate';
import type { Failure } from '../src/failure.js';
import type {
  DeadlineActorInput,
  ExecutorActorInput,
  ExecutorOutcome,
  PlannerActorInput,
  PlannerOutcome,
  RunContext,
  RunEvent,
  RunInput,
  StopReason,
  TimerActorInput,
} from './types.js';

/** Stored with every snapshot; bump it when a persisted snapshot would no longer restore. */
export const MACHINE_VERSION = 2;

function unprovided(name: string): never {
  throw new Error(`Actor '${name}' was not provided to the run machine`);
}

function errorFailure(error: unknown): Failure {
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal.error', kind: 'system', message };
}

type StopWithFailure = Exclude<StopReason, 'rejected' | 'error'>;

function stopFailure(reason: StopWithFailure, message: string): { reason: StopReason; failure: Failure } {
  const codes = {
    cancelled: ['run.cancelled', 'user'],
    timeout: ['run.timeout', 'system'],
    budget_exceeded: ['run.budget_exceeded', 'system'],
    max_steps: ['run.max_steps', 'system'],
    loop_detected: ['run.loop_detected', 'system'],
  } as const;
  const [code, kind] = codes[reason];
  return { reason, failure: { code, kind, message } };
}

/** Ending a run from outside: every active state takes these (not `pending`, which only starts). */
const cancelled = (event: Extract<RunEvent, { type: 'cancel' }>) =>
  stopFailure('cancelled', `Run cancelled${event.reason ? `: ${event.reason}` : ''}`);

const CANCEL_AND_TIMEOUT = {
  cancel: [
    {
      // Undo first: the executor compensates the completed calls, then the run ends cancelled.
      guard: 'wantsCompensation',
      target: '#run.executing',
      reenter: true,
      actions: {
        type: 'compensate',
        params: ({ event }: { event: Extract<RunEvent, { type: 'cancel' }> }) => ({
          reason: 'cancelled' as const,
          failure: cancelled(event).failure,
        }),
      },
    },
    {
      target: '#run.failed',
      actions: {
        type: 'stop',
        params: ({ event }: { event: Extract<RunEvent, { type: 'cancel' }> }) => cancelled(event),
      },
    },
  ],
  timeout: {
    target: '#run.failed',
    actions: { type: 'stop', params: stopFailure('timeout', 'The run passed its deadline') },
  },
} as const;

/** A budget ran out: only the states whose actors spend budget send this. */
const BUDGET = {
  budget_exceeded: {
    target: '#run.failed',
    // The budget's name goes into the failure so the user sees which one ran out.
    actions: {
      type: 'stop',
      params: ({ event }: { event: Extract<RunEvent, { type: 'budget_exceeded' }> }) =>
        stopFailure('budget_exceeded', `The run used up its ${event.budget} budget`),
    },
  },
} as const;

/** The run machine definition; `runMachine.provide({ actors })` makes it runnable. */
export const runMachine = setup({
  types: {
    context: {} as RunContext,
    events: {} as RunEvent,
    input: {} as RunInput,
  },
  actors: {
    planner: fromPromise<PlannerOutcome, PlannerActorInput>(() => unprovided('planner')),
    executor: fromPromise<ExecutorOutcome, ExecutorActorInput>(() => unprovided('executor')),
    deadline: fromCallback<RunEvent, DeadlineActorInput>(() => unprovided('deadline')),
    // For variants: a delay whose instant is data (see `durableDelay` in ./variants.ts).
    timer: fromCallback<RunEvent, TimerActorInput>(() => unprovided('timer')),
  },
  actions: {
    stop: assign((_, params: { reason: StopReason; failure: Failure | null }) => ({
      stopReason: params.reason,
      failure: params.failure,
      pendingApprovalId: null,
      waitReason: null,
    })),
    compensate: assign((_, params: { reason: 'cancelled' | 'rejected'; failure: Failure | null }) => ({
      compensation: { reason: params.reason, failure: params.failure, report: null },
      pendingApprovalId: null,
      waitReason: null,
    })),
  },
  guards: {
    isLoop: ({ context, event }) =>
      event.type === 'next_step' &&
      event.loopSignature !== null &&
      event.loopSignature === context.loopSignature &&
      context.loopCount + 1 >= context.limits.loopThreshold,
    isLastStep: ({ context }) => context.stepIndex + 1 >= context.limits.maxSteps,
    isTerminatingRejection: ({ event }) => event.type === 'rejected' && event.terminate,
    isCompensating: ({ context }) => Boolean(context.compensation),
    // A wait on one call (its outcome unknown, or its tool's version changed), not on a whole step.
    isUncertainWait: ({ context }) => context.waitReason !== null && context.waitReason !== 'approval',
    // Asked for, and not already under way (a second cancel while compensating just ends the run).
    wantsCompensation: ({ context, event }) =>
      (event.type === 'cancel' || event.type === 'rejected') && event.compensate === true && !context.compensation,
    isPendingApproval: ({ context, event }) =>
      (event.type === 'approved' || event.type === 'rejected') && event.approvalId === context.pendingApprovalId,
  },
}).createMachine({
  id: 'run',
  context: ({ input }) => ({
    runId: input.runId,
    stepIndex: 0,
    llmCalls: 0,
    toolCalls: 0,
    tokens: 0,
    costUsd: 0,
    limits: input.limits,
    deadlineAt: input.deadlineAt,
    pendingApprovalId: null,
    waitReason: null,
    loopSignature: null,
    loopCount: 0,
    stopReason: null,
    failure: null,
    compensation: null,
  }),
  initial: 'pending',
  // The deadline is data: restoring a snapshot restarts this actor with the persisted instant.
  invoke: {
    src: 'deadline',
    input: ({ context }) => ({ runId: context.runId, deadlineAt: context.deadlineAt }),
  },
  states: {
    pending: {
      on: { start: 'planning' },
    },
    planning: {
      invoke: {
        src: 'planner',
        input: ({ context }) => ({
          runId: context.runId,
          stepIndex: context.stepIndex,
          llmCalls: context.llmCalls,
          tokens: context.tokens,
          costUsd: context.costUsd,
          limits: context.limits,
        }),
        onDone: { actions: raise(({ event }) => event.output) },
        onError: {
          actions: raise(({ event }) => ({ type: 'plan_error' as const, failure: errorFailure(event.error) })),
        },
      },
      on: {
        ...CANCEL_AND_TIMEOUT,
        ...BUDGET,
        plan_ready: {
          target: 'executing',
          actions: assign({
            llmCalls: ({ context }) => context.llmCalls + 1,
            tokens: ({ context, event }) => context.tokens + event.usage.inputTokens + event.usage.outputTokens,
            costUsd: ({ context, event }) => context.costUsd + (event.usage.costUsd ?? 0),
          }),
        },
        plan_error: {
          target: 'failed',
          actions: assign({ stopReason: 'error', failure: ({ event }) => event.failure }),
        },
      },
    },
    executing: {
      invoke: {
        src: 'executor',
        input: ({ context }) => ({
          runId: context.runId,
          stepIndex: context.stepIndex,
          toolCalls: context.toolCalls,
          limits: context.limits,
          ...(context.compensation ? { compensating: true } : {}),
        }),
        onDone: { actions: raise(({ event }) => event.output) },
        onError: {
          actions: raise(({ event }) => ({ type: 'exec_error' as const, failure: errorFailure(event.error) })),
        },
      },
      on: {
        ...CANCEL_AND_TIMEOUT,
        ...BUDGET,
        compensated: {
          guard: 'isCompensating',
          target: 'failed',
          actions: assign(({ context, event }) => ({
            stopReason: context.compensation!.reason,
            failure: context.compensation!.failure,
            compensation: { ...context.compensation!, report: event.report },
          })),
        },
        next_step: [
          {
            guard: 'isLoop',
            target: 'failed',
            actions: {
              type: 'stop',
              params: stopFailure('loop_detected', 'The same failing tool call was repeated'),
            },
          },
          {
            guard: 'isLastStep',
            target: 'failed',
            actions: { type: 'stop', params: stopFailure('max_steps', 'The run reached its step limit') },
          },
          {
            target: 'planning',
            actions: assign({
              stepIndex: ({ context }) => context.stepIndex + 1,
              toolCalls: ({ context, event }) => context.toolCalls + event.toolCalls,
              loopCount: ({ context, event }) =>
                event.loopSignature !== null && event.loopSignature === context.loopSignature
                  ? context.loopCount + 1
                  : event.loopSignature === null
                    ? 0
                    : 1,
              loopSignature: ({ event }) => event.loopSignature,
            }),
          },
        ],
        done: 'succeeded',
        need_approval: {
          target: 'waiting_human',
          actions: assign({
            pendingApprovalId: ({ event }) => event.approvalId,
            waitReason: ({ event }) => event.reason,
            toolCalls: ({ context, event }) => context.toolCalls + event.toolCalls,
          }),
        },
        exec_error: {
          target: 'failed',
          actions: assign({ stopReason: 'error', failure: ({ event }) => event.failure }),
        },
      },
    },
    waiting_human: {
      on: {
        ...CANCEL_AND_TIMEOUT,
        approved: {
          guard: 'isPendingApproval',
          target: 'executing',
          actions: assign({ pendingApprovalId: null, waitReason: null }),
        },
        rejected: [
          {
            guard: and(['isPendingApproval', 'isTerminatingRejection', 'wantsCompensation']),
            target: 'executing',
            actions: { type: 'compensate', params: { reason: 'rejected', failure: null } },
          },
          {
            guard: and(['isPendingApproval', 'isTerminatingRejection']),
            target: 'failed',
            actions: { type: 'stop', params: { reason: 'rejected', failure: null } },
          },
          {
            // An uncertain call recorded as "not done" resumes the same step: the model is
            // told through that call's observation, and the step's other calls still run.
            guard: and(['isPendingApproval', 'isUncertainWait']),
            target: 'executing',
            actions: assign({ pendingApprovalId: null, waitReason: null }),
          },
          {
            // A rejected step still counts: the next one may be past the limit.
            guard: and(['isPendingApproval', 'isLastStep']),
            target: 'failed',
            actions: { type: 'stop', params: stopFailure('max_steps', 'The run reached its step limit') },
          },
          {
            guard: 'isPendingApproval',
            target: 'planning',
            actions: assign({
              pendingApprovalId: null,
              waitReason: null,
              stepIndex: ({ context }) => context.stepIndex + 1,
            }),
          },
        ],
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
});

export type RunMachine = typeof runMachine;
