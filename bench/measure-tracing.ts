/**
 * What tracing costs: the same 5-step loop, 10 runs in flight, in alternating 1-second windows
 * with the tracing hook off (`tracing: false`), on with no tracer provider registered (the
 * default: the spans are no-ops), and on with an SDK provider recording every span in memory.
 * Medians of three windows each, as ratios to "off", side by side in one process.
 */
import { join } from 'node:path';
import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { batonIdGenerator, createRuntime } from '../src/index.js';
import { formatNumber } from './format-table.js';
import { loopWindow, readLoop } from './read-loop.js';

type Mode = 'off' | 'no provider' | 'SDK provider';

export interface TracingCost {
  runsPerSecond: Record<Mode, number>;
  spans: number;
}

/** Measures the three modes on files in `dir`. */
export async function measureTracing(dir: string, windowMs = 1_000): Promise<TracingCost> {
  const loop = readLoop(5);
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    idGenerator: batonIdGenerator,
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const samples: Record<Mode, number[]> = { off: [], 'no provider': [], 'SDK provider': [] };
  let spans = 0;
  for (let round = 0; round < 3; round += 1) {
    for (const mode of ['off', 'no provider', 'SDK provider'] as Mode[]) {
      if (mode === 'SDK provider') trace.setGlobalTracerProvider(provider);
      const runtime = createRuntime({
        database: join(dir, `tracing-${round}-${mode.replace(' ', '-')}.db`),
        ...loop,
        ...(mode === 'off' ? { tracing: false } : {}),
      });
      try {
        await runtime.ready;
        samples[mode].push(await loopWindow(runtime, windowMs));
      } finally {
        await runtime.close();
        if (mode === 'SDK provider') {
          spans += exporter.getFinishedSpans().length;
          exporter.reset();
          trace.disable();
        }
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
  return {
    runsPerSecond: {
      off: median(samples.off),
      'no provider': median(samples['no provider']),
      'SDK provider': median(samples['SDK provider']),
    },
    spans,
  };
}

/** The tracing rows of the report. */
export function formatTracing(cost: TracingCost): string {
  const off = cost.runsPerSecond.off;
  const row = (mode: Mode) =>
    `  ${mode.padEnd(14)} ${formatNumber(Math.round(cost.runsPerSecond[mode])).padStart(6)} runs/s  ${(cost.runsPerSecond[mode] / off).toFixed(2)}× of off`;
  return [
    'Tracing (5-step read loop, 10 in flight, median of 3 alternating 1 s windows):',
    row('off'),
    row('no provider'),
    `${row('SDK provider')} (${formatNumber(cost.spans)} spans recorded in memory)`,
  ].join('\n');
}
