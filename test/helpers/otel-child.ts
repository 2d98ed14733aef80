/**
 * A child process that traces one phase of a run into a JSON-lines file, with an OpenTelemetry
 * SDK provider using Baton's id generator: `start` runs until the approval wait and dies there
 * (SIGKILL), `approve` approves and dies inside the approved unsafe call, `finish` resumes the
 * run, records the uncertain call as done, and lets it end.
 */
import { appendFileSync } from 'node:fs';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { batonIdGenerator, createRuntime } from '../../src/index.js';
import { tracedRun } from './traced-run.js';

const { db, effects, spans, phase } = JSON.parse(process.argv[2]!) as {
  db: string;
  effects: string;
  spans: string;
  phase: string;
};

/** Writes each ended span at once: a SIGKILL loses nothing already ended. */
const fileExporter: SpanExporter = {
  export(batch: ReadableSpan[], done) {
    for (const span of batch) {
      appendFileSync(
        spans,
        `${JSON.stringify({
          name: span.name,
          traceId: span.spanContext().traceId,
          spanId: span.spanContext().spanId,
          parentSpanId: span.parentSpanContext?.spanId ?? null,
          attributes: span.attributes,
          events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
          pid: process.pid,
          phase,
        })}\n`,
      );
    }
    done({ code: 0 });
  },
  shutdown: async () => undefined,
};
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ idGenerator: batonIdGenerator, spanProcessors: [new SimpleSpanProcessor(fileExporter)] }),
);

const runtime = createRuntime({ database: db, ...tracedRun(effects, { killAfterEffect: phase === 'approve' }) });
await runtime.ready;
if (phase === 'start') {
  const run = await runtime.wait((await runtime.start({ input: 'send it', sessionId: 'otel' })).id);
  console.log(JSON.stringify({ runId: run.id, status: run.status }));
  process.kill(process.pid, 'SIGKILL');
}
const [run] = (await runtime.list({ limit: 1 })).runs;
const waiting = await runtime.wait(run!.id);
if (phase === 'approve') {
  await runtime.approve(waiting.id, waiting.pendingApprovalId!, { by: 'alice' });
  await runtime.wait(waiting.id);
}
if (phase === 'finish') {
  await runtime.approve(waiting.id, waiting.pendingApprovalId!, { by: 'bob', resolution: 'done' });
  console.log(JSON.stringify({ status: (await runtime.wait(waiting.id)).status }));
}
await runtime.close();
