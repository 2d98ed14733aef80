/** A client that closed its connection mid-request: an expected end, not the server's error. */
import { BatonError, createFailure } from '../failure.js';

/**
 * `request.aborted` when `error` is the request body breaking off because the client went away
 * (node's `aborted`, ECONNRESET, or the request's own signal), else undefined. Wherever the body
 * was being read (the size limit, the JSON reader), nobody is left to read the answer, so it is
 * not reported as unexpected.
 */
export function clientGone(error: unknown, request: Request): BatonError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (!request.signal.aborted && code !== 'ECONNRESET' && code !== 'ECONNABORTED') return undefined;
  return new BatonError(
    createFailure('request.aborted', 'The client closed the connection before the request was complete'),
  );
}
