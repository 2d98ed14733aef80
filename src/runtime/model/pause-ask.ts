/** A pause asked of a run, as its row stores it (`runs.pause_requested`: `{"reason","by","at"}` JSON). */

/** A pause request as stored on the run. */
export function pauseRequest(reason: string | undefined, by: string | undefined): string {
  return JSON.stringify({ reason: reason ?? null, by: by ?? null, at: Date.now() });
}

/** Who asked a pause and why, read from its stored request (null for one that does not parse). */
export function parsePauseRequest(request: string): { reason: string | null; by: string | null; at: number } | null {
  try {
    const parsed = JSON.parse(request) as { reason?: unknown; by?: unknown; at?: unknown };
    return {
      reason: typeof parsed.reason === 'string' ? parsed.reason : null,
      by: typeof parsed.by === 'string' ? parsed.by : null,
      at: typeof parsed.at === 'number' ? parsed.at : 0,
    };
  } catch {
    return null;
  }
}
