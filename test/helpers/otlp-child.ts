/**
 * A process that traces one run into a real OTLP/HTTP exporter behind a batch processor (what the
 * README shows), then closes the runtime and exits at once with `process.exit`, as the CLI does:
 * whatever the batch still held is exported only if `close()` flushed it.
 */
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { batonIdGenerator, createRuntime, createScriptedPlanner } from '../../src/index.js';
import { createWorld } from './world.js';

const { db, effects, url } = JSON.parse(process.argv[2]!) as { db: string; effects: string; url: string };

trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    idGenerator: batonIdGenerator,
    // A batch far larger and a delay far longer than the run: nothing is exported before close().
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url }), {
        maxExportBatchSize: 512,
        scheduledDelayMillis: 600_000,
      }),
    ],
  }),
);

// Step 0 reads and sends (approval), step 1 reads again, step 2 answers.
const world = createWorld(effects, { risk: 'high' });
const planner = createScriptedPlanner([
  {
    type: 'tool_calls',
    calls: [
      { tool: 'world.read', args: { value: 'look' } },
      { tool: 'world.unsafe', args: { value: 'send' } },
    ],
  },
  { type: 'tool_calls', calls: [{ tool: 'world.read', args: { value: 'check' } }] },
  { type: 'final', answer: 'sent' },
]);
const runtime = createRuntime({
  database: db,
  agent: 'tracer',
  planner: { ...planner, model: 'scripted-model' },
  tools: [createWorld(effects).read, world.unsafe],
});
const run = await runtime.wait((await runtime.start({ input: 'send it' })).id);
await runtime.approve(run.id, run.pendingApprovalId!, { by: 'alice' });
const done = await runtime.wait(run.id);
await runtime.close();
console.log(JSON.stringify({ runId: run.id, status: done.status }));
process.exit(0);
