/** How `baton serve` and `baton worker` log what their runtime handled in the background. */
import type { BackgroundErrorContext, Failure } from '../index.js';

/** An `onError` for `createRuntime` that writes one line per failure to `out` (a JSON line with `--json`). */
export function logBackgroundErrors(
  out: NodeJS.WritableStream,
  json: boolean,
): (failure: Failure, where: BackgroundErrorContext) => void {
  return (failure, where) => {
    const run = where.runId ? ` (run ${where.runId})` : '';
    out.write(
      json
        ? `${JSON.stringify({ type: 'background_error', activity: where.activity, run_id: where.runId ?? null, error: failure })}\n`
        : `baton: ${where.activity}${run}: ${failure.code}: ${failure.message}\n`,
    );
  };
}
