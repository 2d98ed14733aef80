/**
 * A Baton run as a child actor of a service's own XState v5 machine. The actor starts a run
 * (or, by its idempotency key, re-attaches to the one it started before), sends the run's
 * committed events to its parent as `baton.event`, and completes with the run's outcome: done
 * with `{ runId, answer }`, or an error carrying the run's failure. Because the key is in the
 * actor's input, a parent restored from a persisted snapshot (in another process, after a
 * crash) restarts the actor with the same key, and it re-attaches to the same run instead of
 * starting another; the parent receives the outcome once, when the run ends.
 */
import { fromPromise } from 'xstate';
import { BatonError, createFailure } from '../failure.js';
import type { Runtime } from '../runtime/index.js';
import type { RunEventRecord, StartRequest } from '../runtime/model/types.js';

/** What a parent gives the actor: the run's request and the key that names it for good. */
export interface BatonRunInput {
  /** Names the run: the same key re-attaches to the same run (required, so a restore cannot start a second). */
  idempotencyKey: string;
  request: Omit<StartRequest, 'options'> & { options?: Omit<NonNullable<StartRequest['options']>, 'idempotencyKey'> };
}

/** What the actor completes with when the run succeeds. */
export interface BatonRunOutput {
  runId: string;
  answer: string;
}

/** The event the parent receives for each committed event of the run (drafts included, live only). */
export interface BatonRunEvent {
  type: 'baton.event';
  runId: string;
  event: RunEventRecord;
}

/** Iterates `source` until it ends or `signal` aborts (then at once, even while it waits). */
async function* untilAborted<T>(source: AsyncGenerator<T>, signal: AbortSignal): AsyncGenerator<T> {
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal.aborted) resolve('aborted');
    else signal.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  try {
    for (;;) {
      const next = await Promise.race([source.next(), aborted]);
      if (next === 'aborted' || next.done) return;
      yield next.value;
    }
  } finally {
    void source.return(undefined).catch(() => undefined);
  }
}

/**
 * Actor logic for a Baton run, to `invoke` from another machine.
 * @example
 * const order = setup({ actors: { fulfil: fromBatonRun(runtime) } }).createMachine({
 *   initial: 'fulfilling',
 *   states: {
 *     fulfilling: {
 *       invoke: {
 *         src: 'fulfil',
 *         input: { idempotencyKey: 'order-42', request: { input: 'Ship order 42' } },
 *         onDone: { target: 'shipped' },
 *         onError: { target: 'held' },
 *       },
 *     },
 *     shipped: {}, held: {},
 *   },
 * });
 */
export function fromBatonRun(runtime: Runtime) {
  return fromPromise<BatonRunOutput, BatonRunInput>(async ({ input, self, signal }) => {
    const run = await runtime.start({
      ...input.request,
      options: { ...input.request.options, idempotencyKey: input.idempotencyKey },
    });
    // The parent hears the run as it goes (sendParent, from a promise actor).
    const parent = (self as unknown as { _parent?: { send(event: BatonRunEvent): void } })._parent;
    for await (const event of untilAborted(runtime.events(run.id), signal)) {
      parent?.send({ type: 'baton.event', runId: run.id, event });
    }
    if (signal.aborted)
      throw new BatonError(createFailure('run.cancelled', `The parent stopped following run '${run.id}'`));
    const ended = await runtime.get(run.id);
    if (ended.status === 'succeeded') return { runId: run.id, answer: ended.answer ?? '' };
    // A run a reviewer ended (`rejected`) has no failure of its own: the refusal is the reason.
    throw new BatonError(
      ended.failure ?? createFailure('policy.denied', `Run '${run.id}' was ended by a reviewer (${ended.stopReason})`),
    );
  });
}
