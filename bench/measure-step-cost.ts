/**
 * Scaling of one run's steps: the time a step takes near the start of a long run and near its
 * end, and the bytes stored per step, for short and long runs with small and 20 KB tool outputs.
 * A step is timed from one planning start to the next (the planner actor's hook).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime, createScriptedPlanner, defineTool } from '../src/index.js';
import { openDatabase } from '../src/store/index.js';

/** One run's step costs. */
export interface StepCost {
  steps: number;
  outputBytes: number;
  /** Median ms per step over steps 5–15, and over the last ten. */
  earlyMs: number;
  lateMs: number;
  /** Bytes stored per step: the steps table (decisions, reports), and all but artifacts. */
  stepBytesPerStep: number;
  storedBytesPerStep: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Runs one run of `steps` tool steps whose tool returns `outputBytes`, and measures it. */
export async function measureStepCost(dir: string, steps: number, outputBytes: number): Promise<StepCost> {
  const database = join(dir, `steps-${steps}-${outputBytes}.db`);
  const starts: number[] = [];
  const fetch = defineTool({
    name: 'page.fetch',
    description: 'Fetches a page',
    input: z.object({ n: z.number() }),
    effect: 'read',
    risk: 'low',
    execute: ({ n }) => `page ${n}: ${'x'.repeat(outputBytes)}`,
  });
  const runtime = createRuntime({
    database,
    planner: createScriptedPlanner((request) =>
      request.stepIndex < steps
        ? { type: 'tool_calls', calls: [{ tool: 'page.fetch', args: { n: request.stepIndex } }] }
        : { type: 'final', answer: 'done' },
    ),
    tools: [fetch],
    hooks: {
      beforeActor: ({ actor }) => {
        if (actor === 'planner') starts.push(performance.now());
      },
    },
  });
  try {
    const run = await runtime.start({ input: 'read every page', options: { maxSteps: steps + 1 } });
    const done = await runtime.wait(run.id);
    if (done.status !== 'succeeded') throw new Error(`the ${steps}-step run ended ${done.status}`);
    const durations = starts.slice(1).map((at, i) => at - starts[i]!);
    const { sqlite } = openDatabase(database);
    try {
      const stepBytes = sqlite
        .prepare("select sum(length(decision) + length(usage) + length(coalesce(context, ''))) from steps")
        .pluck()
        .get() as number;
      // Every row the run left (its snapshot, events, ledger, steps, history), artifacts aside.
      const storedBytes = sqlite
        .prepare(
          `select (select sum(length(snapshot) + length(input) + length(context) + length(options) + length(coalesce(answer, ''))) from runs)
                + (select sum(length(data) + length(type) + 16) from events)
                + (select sum(length(args) + length(coalesce(result, '')) + length(id) + length(tool) + 48) from tool_calls)
                + ${stepBytes}
                + (select coalesce(sum(length(content)), 0) from messages)`,
        )
        .pluck()
        .get() as number;
      return {
        steps,
        outputBytes,
        storedBytesPerStep: storedBytes / (steps + 1),
        earlyMs: median(durations.slice(5, 15)),
        lateMs: median(durations.slice(-10)),
        stepBytesPerStep: stepBytes / (steps + 1),
      };
    } finally {
      sqlite.close();
    }
  } finally {
    await runtime.close();
  }
}
