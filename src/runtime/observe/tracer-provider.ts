/**
 * What the tracer asks of the application's tracer provider, through `@opentelemetry/api` only:
 * whether one is registered, and to export what it still holds.
 */
import { trace } from '@opentelemetry/api';

/** Whether the application registered a tracer provider (the API's proxy delegates to a no-op one until then). */
export function providerRegistered(): boolean {
  const provider = trace.getTracerProvider() as { getDelegate?: () => object };
  const delegate = provider.getDelegate?.() ?? provider;
  return delegate.constructor.name !== 'NoopTracerProvider';
}

/**
 * Exports what the registered provider still holds (a batch processor's queue): a process that
 * exits right after `close()` (the CLI does, with `process.exit`) would lose it otherwise.
 */
export async function flushRegisteredProvider(): Promise<void> {
  const provider = trace.getTracerProvider() as { getDelegate?: () => object };
  const delegate = (provider.getDelegate?.() ?? provider) as { forceFlush?: () => Promise<void> };
  if (typeof delegate.forceFlush === 'function') await delegate.forceFlush();
}
