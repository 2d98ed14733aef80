// @ts-check
/**
 * The rows of a run's ledger table: the API's tool calls when live (with their results and risk,
 * and how each interrupted call was resolved, from the fold), the fold's own calls when
 * replaying or before the API has answered. A compensation's own row shows on the call it
 * undoes, as that call's mark; a call a person edited before approving keeps the model's arguments.
 */

/** @typedef {import('./types.js').FoldState} FoldState */
/** @typedef {import('./types.js').ToolCallJson} ToolCallJson */

/**
 * @param {FoldState} state the folded state on screen
 * @param {ToolCallJson[]} toolCalls the API's rows; empty when replaying
 */
export function ledgerRows(state, toolCalls) {
  if (toolCalls.length === 0) return Object.values(state.calls);
  const undone = new Map(toolCalls.filter((row) => row.compensates).map((row) => [row.compensates, row.status]));
  return toolCalls
    .filter((row) => !row.compensates)
    .map((row) => {
      const folded = state.calls[row.id];
      const compensation = undone.get(row.id) ?? folded?.compensation;
      const result = /** @type {Record<string, any> | null} */ (row.result);
      return {
        id: row.id,
        tool: row.tool,
        args: row.args,
        effect: row.effect,
        risk: row.risk,
        status: row.status,
        attempts: row.attempts,
        ok: result ? result.status === 'ok' : null,
        failure: result?.failure ?? null,
        durationMs: result?.duration_ms ?? null,
        truncated: result?.truncated === true,
        recovery: folded?.recovery ?? [],
        result: result && result.status === 'ok' ? result.content : undefined,
        artifact: typeof result?.artifact?.sha256 === 'string' ? result.artifact.sha256 : null,
        edited: row.edited ?? null,
        ...(compensation ? { compensation } : {}),
      };
    });
}
