/**
 * Preloaded into `baton serve` (`node --import`), as an operator adds tracing to the CLI: a tracer
 * provider with a batch processor and the real OTLP/HTTP exporter, sending to
 * `BATON_TEST_OTLP_URL`. The batch waits far longer than the test, so a span reaches the receiver
 * only if the CLI's graceful stop flushed the provider.
 */
import process from 'node:process';
import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { batonIdGenerator } from '../../dist/src/index.js';

trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    idGenerator: batonIdGenerator,
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: process.env.BATON_TEST_OTLP_URL }), {
        maxExportBatchSize: 512,
        scheduledDelayMillis: 600_000,
      }),
    ],
  }),
);
