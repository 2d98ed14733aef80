/**
 * A service's own "order fulfilment" machine that invokes a Baton run (`fromBatonRun`), as a
 * child process whose parent snapshot is persisted to a file after every transition.
 *   argv[2] = JSON { db, effects, snapshot, mode }
 *   mode 'first':   start the order; print {"waiting": runId} once the run waits for approval,
 *                   then stay until killed.
 *   mode 'restore': restore the order from its snapshot, approve the run as a human would,
 *                   and print the order's final state, context and the number of runs.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { assign, createActor, setup, type Snapshot } from 'xstate';
import { createRuntime, fromBatonRun, type BatonRunEvent, type BatonRunOutput } from '../../src/index.js';
import { createServerAgent } from './server-agent.js';

const { db, effects, snapshot, mode } = JSON.parse(process.argv[2]!) as {
  db: string;
  effects: string;
  snapshot: string;
  mode: 'first' | 'restore';
};
const agent = createServerAgent(effects);
const runtime = createRuntime({ database: db, planner: agent.planner, tools: agent.tools });

interface OrderContext {
  runId: string | null;
  answer: string | null;
  events: number;
  /** How many times the run's outcome reached the order. */
  outcomes: number;
}

const order = setup({
  types: { context: {} as OrderContext, events: {} as BatonRunEvent },
  actors: { fulfil: fromBatonRun(runtime) },
}).createMachine({
  id: 'order',
  initial: 'fulfilling',
  context: { runId: null, answer: null, events: 0, outcomes: 0 },
  states: {
    fulfilling: {
      invoke: {
        src: 'fulfil',
        // `mail` waits for a human's approval, then answers with what was sent.
        input: { idempotencyKey: 'order-42', request: { input: 'mail' } },
        onDone: {
          target: 'shipped',
          actions: assign({
            answer: ({ event }) => (event.output as BatonRunOutput).answer,
            outcomes: ({ context }) => context.outcomes + 1,
          }),
        },
        onError: { target: 'held', actions: assign({ outcomes: ({ context }) => context.outcomes + 1 }) },
      },
      on: {
        'baton.event': {
          actions: assign({ runId: ({ event }) => event.runId, events: ({ context }) => context.events + 1 }),
        },
      },
    },
    shipped: { type: 'final' },
    held: { type: 'final' },
  },
});

function persist(): void {
  // Written whole, then renamed: a kill mid-write leaves the previous snapshot.
  writeFileSync(`${snapshot}.tmp`, JSON.stringify(actor.getPersistedSnapshot()));
  renameSync(`${snapshot}.tmp`, snapshot);
}

const actor =
  mode === 'restore'
    ? createActor(order, { snapshot: JSON.parse(readFileSync(snapshot, 'utf8')) as Snapshot<unknown> })
    : createActor(order);
actor.subscribe(persist);
actor.start();

if (mode === 'first') {
  for (;;) {
    const runId = actor.getSnapshot().context.runId;
    const run = runId ? await runtime.get(runId) : undefined;
    if (run?.status === 'waiting_human') {
      persist();
      process.stdout.write(`${JSON.stringify({ waiting: runId })}\n`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Stay until the test kills this process.
  await new Promise(() => undefined);
} else {
  const runId = actor.getSnapshot().context.runId!;
  const waiting = await runtime.wait(runId);
  await runtime.approve(runId, waiting.pendingApprovalId!, { by: 'warehouse-lead' });
  await new Promise<void>((resolve) => {
    const sub = actor.subscribe((state) => {
      if (state.status === 'done') {
        sub.unsubscribe();
        resolve();
      }
    });
    if (actor.getSnapshot().status === 'done') resolve();
  });
  const done = actor.getSnapshot();
  const runs = (await runtime.list({ limit: 200 })).runs.map((run) => run.id);
  process.stdout.write(`${JSON.stringify({ state: done.value, context: done.context, runs })}\n`);
  await runtime.close();
}
