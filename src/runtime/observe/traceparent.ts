/** The W3C Trace Context header a run may be started under (`StartRequest.traceparent`). */
import type { SpanContext } from '@opentelemetry/api';

/** A W3C `traceparent` header's span context, or null when it is not one. */
export function parseTraceparent(header: string | undefined | null): SpanContext | null {
  const match = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec((header ?? '').trim());
  if (!match || match[1] === 'ff' || /^0+$/.test(match[2]!) || /^0+$/.test(match[3]!)) return null;
  return { traceId: match[2]!, spanId: match[3]!, traceFlags: Number.parseInt(match[4]!, 16), isRemote: true };
}
