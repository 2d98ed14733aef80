/**
 * The run machine: six public states, the events of docs/architecture.md §3, and the invoked actors
 * (`planner`, `executor`, `deadline`, and `timer` for variants' durable delays) that are
 * declared here by name and supplied by the runtime with `machine.provide()`. It is pure: no
 * I/O, no clients, JSON-only context.
 */
import { and, assign, fromCallback, fromPromise, not, raise, sendTo, setup } from 'xstate';
import type { Failure } from '../src/failure.js';
import { CALL_WAIT_REASONS } from './types.js';
import type {
  BudgetWait,
  DeadlineActorInput,
  DeadlineMoved,
  HandoverBudget,
  PauseWait,
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
    expired: ['approval.expired', 'user'],
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

/** The failure of a budget that ran out (named, so the user sees which one). */
function budgetStop(budget: HandoverBudget) {
  if (budget === 'timeout') return stopFailure('timeout', 'The run passed its deadline');
  if (budget === 'max_steps') return stopFailure('max_steps', 'The run reached its step limit');
  return stopFailure('budget_exceeded', `The run used up its ${budget} budget`);
}

/** The id of a run's next budget wait: made from its context, so a replay finds the same. */
function budgetWaitId(context: RunContext): string {
  return `${context.runId}.budget.${(context.budgetAsks ?? 0) + 1}`;
}

/** The id of a run's next pause: made from its context, so a replay finds the same. */
function pauseId(context: RunContext): string {
  return `${context.runId}.pause.${(context.pauses ?? 0) + 1}`;
}

/** Enters a budget wait: the run asks a person whether to go on (`onBudgetExceeded: 'ask'`). */
function askOnBudget(context: RunContext, wait: BudgetWait) {
  return {
    pendingApprovalId: budgetWaitId(context),
    waitReason: 'budget' as const,
    budgetWait: wait,
    budgetAsks: (context.budgetAsks ?? 0) + 1,
  };
}

/**
 * A budget ran out: only the states whose actors spend budget send this. With
 * `onBudgetExceeded: 'ask'` the run waits for a person (and goes on where it stopped if they
 * extend it), else it ends.
 */
function budgetIn(resume: BudgetWait['resume']) {
  return {
    budget_exceeded: [
      { guard: 'asksOnBudget', target: '#run.waiting_human', actions: { type: 'askBudget', params: { resume } } },
      { target: '#run.failed', actions: 'stopOnBudget' },
    ],
  } as const;
}

/** The deadline passed while the run was being driven: it ends, or asks a person for more time. */
function timeoutIn(resume: BudgetWait['resume']) {
  return {
    timeout: [
      {
        guard: and(['asksOnBudget', not('isCompensating')]),
        target: '#run.waiting_human',
        actions: { type: 'askBudget', params: { resume } },
      },
      CANCEL_AND_TIMEOUT.timeout,
    ],
  } as const;
}

/** The counters a finished step moves on: the step, its calls, the loop signature. */
function nextStepCounters(context: RunContext, event: RunEvent) {
  const next = event as Extract<RunEvent, { type: 'next_step' }>;
  return {
    stepIndex: context.stepIndex + 1,
    toolCalls: context.toolCalls + next.toolCalls,
    loopCount:
      next.loopSignature !== null && next.loopSignature === context.loopSignature
        ? context.loopCount + 1
        : next.loopSignature === null
          ? 0
          : 1,
    loopSignature: next.loopSignature,
    ...(next.handoffStack ? { handoffStack: next.handoffStack } : {}),
  };
}

/**
 * A wait refused without ending the run (a rejection that tells the model, or an expiry that
 * rejects): a call's wait goes on with the same step; a step's goes on to the next, if any.
 */
const REFUSED = [
  {
    // An uncertain call recorded as "not done", an unanswered question: the same step resumes,
    // the model told through that call's observation, and the step's other calls still run.
    guard: and(['isPendingApproval', 'isUncertainWait']),
    target: '#run.executing',
    actions: 'endWait',
  },
  {
    // A rejected step still counts: the next one may be past the limit.
    guard: and(['isPendingApproval', 'isLastStep']),
    target: '#run.failed',
    actions: { type: 'stop', params: stopFailure('max_steps', 'The run reached its step limit') },
  },
  { guard: 'isPendingApproval', target: '#run.planning', actions: ['endWait', 'skipStep'] },
] as const;

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
    deadline: fromCallback<DeadlineMoved, DeadlineActorInput>(() => unprovided('deadline')),
    // For variants: a delay whose instant is data (see `durableDelay` in ./variants.ts).
    timer: fromCallback<RunEvent, TimerActorInput>(() => unprovided('timer')),
  },
  actions: {
    stop: assign((_, params: { reason: StopReason; failure: Failure | null }) => ({
      stopReason: params.reason,
      failure: params.failure,
      pendingApprovalId: null,
      waitReason: null,
      budgetWait: null,
      pauseWait: null,
    })),
    /** Counts the planner call whose decision arrived (a decision given by a person is not one). */
    countPlan: assign(({ context, event }) => {
      if (event.type !== 'plan_ready') return {};
      return {
        llmCalls: context.llmCalls + (event.given ? 0 : 1),
        tokens: context.tokens + event.usage.inputTokens + event.usage.outputTokens,
        costUsd: context.costUsd + (event.usage.costUsd ?? 0),
      };
    }),
    /** Keeps an operator's pause until the run reaches its next step boundary. */
    askPause: assign(({ event }) => {
      if (event.type !== 'pause') return {};
      return { pauseAsk: { reason: event.reason ?? null, by: event.by ?? null } };
    }),
    /** Enters the pause asked: the run waits (reason `paused`) and goes on at `resume` once resumed. */
    enterPause: assign(({ context, event }, params: { resume: PauseWait['resume'] }) => ({
      pendingApprovalId: pauseId(context),
      waitReason: 'paused' as const,
      pauseWait: { resume: params.resume, reason: context.pauseAsk?.reason ?? null, by: context.pauseAsk?.by ?? null },
      pauses: (context.pauses ?? 0) + 1,
      pauseAsk: null,
      ...(event.type === 'next_step' ? nextStepCounters(context, event) : {}),
    })),
    /** Raises the limits a person extended a budget wait with (and the deadline). */
    extend: assign(({ context, event }) => {
      if (event.type !== 'extended') return {};
      return {
        limits: { ...context.limits, ...event.limits },
        ...(event.deadlineAt !== undefined ? { deadlineAt: event.deadlineAt } : {}),
      };
    }),
    moveDeadline: sendTo('deadline', ({ context }) => ({
      type: 'deadline_moved' as const,
      deadlineAt: context.deadlineAt,
    })),
    /** Enters a budget wait for the budget the event says ran out (`onBudgetExceeded: 'ask'`). */
    askBudget: assign(({ context, event }, params: { resume: BudgetWait['resume'] }) => {
      const budget: HandoverBudget =
        event.type === 'budget_exceeded' ? event.budget : event.type === 'timeout' ? 'timeout' : 'max_steps';
      return {
        ...askOnBudget(context, { budget, resume: params.resume }),
        ...(event.type === 'budget_exceeded' ? { toolCalls: context.toolCalls + (event.toolCalls ?? 0) } : {}),
        ...(event.type === 'next_step' ? nextStepCounters(context, event) : {}),
      };
    }),
    /** Ends the run on the budget that ran out: the event's, or the one the run waited on. */
    stopOnBudget: assign(({ context, event }) => {
      const budget = event.type === 'budget_exceeded' ? event.budget : (context.budgetWait?.budget ?? 'max_llm_calls');
      const { reason, failure } = budgetStop(budget);
      return {
        stopReason: reason,
        failure,
        pendingApprovalId: null,
        waitReason: null,
        budgetWait: null,
        pauseWait: null,
        ...(event.type === 'budget_exceeded' ? { toolCalls: context.toolCalls + (event.toolCalls ?? 0) } : {}),
      };
    }),
    nextStep: assign(({ context, event }) => nextStepCounters(context, event)),
    /** A child run's usage becomes its parent's: the parent's limits hold for the whole tree. */
    addChildUsage: assign(({ context, event }) => {
      if (event.type !== 'child_ended') return {};
      return {
        llmCalls: context.llmCalls + event.usage.llmCalls,
        toolCalls: context.toolCalls + event.usage.toolCalls,
        tokens: context.tokens + event.usage.tokens,
        costUsd: context.costUsd + event.usage.costUsd,
      };
    }),
    skipStep: assign(({ context }) => ({ stepIndex: context.stepIndex + 1 })),
    /** Leaves a wait: nothing is pending any more. */
    endWait: assign({ pendingApprovalId: null, waitReason: null, budgetWait: null, pauseWait: null }),
    compensate: assign((_, params: { reason: 'cancelled' | 'rejected'; failure: Failure | null }) => ({
      compensation: { reason: params.reason, failure: params.failure, report: null },
      pendingApprovalId: null,
      waitReason: null,
      budgetWait: null,
      pauseWait: null,
      pauseAsk: null,
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
    // A wait on one call (its outcome unknown, its tool's version changed, a question), not on a whole step.
    isUncertainWait: ({ context }) =>
      context.waitReason !== null && (CALL_WAIT_REASONS as readonly string[]).includes(context.waitReason),
    // A step's calls wait to be allowed: by the `approve` role, or by the role a policy escalated to.
    isStepWait: ({ context }) => context.waitReason === 'approval' || context.waitReason === 'policy',
    isInputWait: ({ context }) => context.waitReason === 'input',
    isChildWait: ({ context }) => context.waitReason === 'child',
    isTaskWait: ({ context }) => context.waitReason === 'task',
    isBudgetWait: ({ context }) => context.waitReason === 'budget' && Boolean(context.budgetWait),
    waitsOnDeadline: ({ context }) => context.waitReason === 'budget' && context.budgetWait?.budget === 'timeout',
    resumesPlanning: ({ context }) => context.budgetWait?.resume === 'planning',
    asksOnBudget: ({ context }) => context.limits.onBudgetExceeded === 'ask',
    // A pause asked, to be honoured at the run's next step boundary.
    pauseAsked: ({ context }) => Boolean(context.pauseAsk),
    // Not asked already, not paused already, and not undoing its calls before it ends.
    canAskPause: ({ context }) => !context.pauseAsk && context.waitReason !== 'paused' && !context.compensation,
    isPauseWait: ({ context }) => context.waitReason === 'paused' && Boolean(context.pauseWait),
    resumesPlanningAfterPause: ({ context }) => context.pauseWait?.resume === 'planning',
    expiresToEnd: ({ event }) => event.type === 'expired' && event.outcome === 'end',
    // Asked for, and not already under way (a second cancel while compensating just ends the run).
    wantsCompensation: ({ context, event }) =>
      (event.type === 'cancel' || event.type === 'rejected') && event.compensate === true && !context.compensation,
    isPendingApproval: ({ context, event }) => 'approvalId' in event && event.approvalId === context.pendingApprovalId,
  },
}).createMachine({
  id: 'run',
  context: ({ input }) => ({
    runId: input.runId,
    stepIndex: input.stepIndex ?? 0,
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
    budgetWait: null,
    budgetAsks: input.budgetAsks ?? 0,
    ...(input.pauses ? { pauses: input.pauses } : {}),
    ...(input.handoffStack?.length ? { handoffStack: input.handoffStack } : {}),
  }),
  initial: 'pending',
  // The deadline is data: restoring a snapshot restarts this actor with the persisted instant
  // (and a person who extends the run's time moves it: `deadline_moved`).
  invoke: {
    id: 'deadline',
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
          ...(context.handoffStack?.length ? { handoffStack: context.handoffStack } : {}),
        }),
        onDone: { actions: raise(({ event }) => event.output) },
        onError: {
          actions: raise(({ event }) => ({ type: 'plan_error' as const, failure: errorFailure(event.error) })),
        },
      },
      on: {
        ...CANCEL_AND_TIMEOUT,
        ...timeoutIn('planning'),
        ...budgetIn('planning'),
        plan_ready: [
          {
            // Paused once the step is planned: its calls run when the run is resumed.
            guard: 'pauseAsked',
            target: 'waiting_human',
            actions: ['countPlan', { type: 'enterPause', params: { resume: 'executing' } }],
          },
          { target: 'executing', actions: 'countPlan' },
        ],
        pause: { guard: 'canAskPause', actions: 'askPause' },
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
          ...(context.handoffStack?.length ? { handoffStack: context.handoffStack } : {}),
        }),
        onDone: { actions: raise(({ event }) => event.output) },
        onError: {
          actions: raise(({ event }) => ({ type: 'exec_error' as const, failure: errorFailure(event.error) })),
        },
      },
      on: {
        ...CANCEL_AND_TIMEOUT,
        ...timeoutIn('executing'),
        ...budgetIn('executing'),
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
            // The step limit, handed to a person: extended, the run plans its next step.
            guard: and(['isLastStep', 'asksOnBudget']),
            target: 'waiting_human',
            actions: { type: 'askBudget', params: { resume: 'planning' } },
          },
          {
            guard: 'isLastStep',
            target: 'failed',
            actions: { type: 'stop', params: stopFailure('max_steps', 'The run reached its step limit') },
          },
          {
            // Paused between steps: the next one is planned when the run is resumed.
            guard: 'pauseAsked',
            target: 'waiting_human',
            actions: { type: 'enterPause', params: { resume: 'planning' } },
          },
          {
            target: 'planning',
            actions: 'nextStep',
          },
        ],
        // A call in flight finishes (and is recorded) before the pause is reached.
        pause: { guard: 'canAskPause', actions: 'askPause' },
        done: 'succeeded',
        need_approval: {
          target: 'waiting_human',
          actions: assign({
            pendingApprovalId: ({ event }) => event.approvalId,
            waitReason: ({ event }) => event.reason,
            toolCalls: ({ context, event }) => context.toolCalls + event.toolCalls,
          }),
        },
        need_input: {
          target: 'waiting_human',
          actions: assign({
            pendingApprovalId: ({ event }) => event.approvalId,
            waitReason: 'input',
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
        // A run waiting on its deadline has passed it already: the deadline actor, re-armed when
        // the run is restored, fires at once and must not end the wait a person is asked about.
        timeout: { ...CANCEL_AND_TIMEOUT.timeout, guard: not('waitsOnDeadline') },
        approved: {
          guard: 'isPendingApproval',
          target: 'executing',
          actions: 'endWait',
        },
        // The step runs with a person's arguments for a call (bound again to their hash).
        edited: { guard: and(['isPendingApproval', 'isStepWait']), target: 'executing', actions: 'endWait' },
        // A person's output is the call's result; the step's other calls run.
        responded: { guard: and(['isPendingApproval', 'isStepWait']), target: 'executing', actions: 'endWait' },
        // The question's answer is the asking call's result: the step goes on.
        answered: { guard: and(['isPendingApproval', 'isInputWait']), target: 'executing', actions: 'endWait' },
        // The child run a call started ended: the call is settled with its outcome, the step goes on.
        child_ended: {
          guard: and(['isPendingApproval', 'isChildWait']),
          target: 'executing',
          actions: ['endWait', 'addChildUsage'],
        },
        // The work a call left running elsewhere ended: the call is settled with its outcome, the step goes on.
        task_ended: { guard: and(['isPendingApproval', 'isTaskWait']), target: 'executing', actions: 'endWait' },
        // A run waiting on something else is paused once that wait is over and the step ends.
        pause: { guard: 'canAskPause', actions: 'askPause' },
        resumed: [
          {
            guard: and(['isPendingApproval', 'isPauseWait', 'resumesPlanningAfterPause']),
            target: 'planning',
            actions: 'endWait',
          },
          { guard: and(['isPendingApproval', 'isPauseWait']), target: 'executing', actions: 'endWait' },
        ],
        extended: [
          {
            guard: and(['isPendingApproval', 'isBudgetWait', 'resumesPlanning']),
            target: 'planning',
            actions: ['extend', 'moveDeadline', 'endWait'],
          },
          {
            guard: and(['isPendingApproval', 'isBudgetWait']),
            target: 'executing',
            actions: ['extend', 'moveDeadline', 'endWait'],
          },
        ],
        rejected: [
          {
            // A person ended a budget wait: the run fails as the budget said.
            guard: and(['isPendingApproval', 'isBudgetWait']),
            target: 'failed',
            actions: 'stopOnBudget',
          },
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
          ...REFUSED,
        ],
        expired: [
          {
            guard: and(['isPendingApproval', 'expiresToEnd']),
            target: 'failed',
            actions: {
              type: 'stop',
              params: stopFailure('expired', 'No one decided in time: the wait expired and the run ends'),
            },
          },
          {
            guard: and(['isPendingApproval', 'isBudgetWait']),
            target: 'failed',
            actions: 'stopOnBudget',
          },
          ...REFUSED,
        ],
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
});

export type RunMachine = typeof runMachine;
