/**
 * Durations on the command line: `30d`, `12h`, `15m`, `90s`, `500ms`, `2w`. A unit is required:
 * a bare `30` would be 30 ms, and `prune --older-than 30` would delete every finished run.
 */
import { usageError } from './cli-error.js';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The milliseconds `value` names; a usage error naming `flag` otherwise (a number without a unit too). */
export function toDurationMs(value: string, flag: string): number {
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) {
    throw usageError(
      `${flag} needs a unit: '${value}' is ambiguous; write ${text}d (days), ${text}h, ${text}m, ${text}s or ${text}ms`,
    );
  }
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/.exec(text);
  const ms = match ? Number(match[1]) * UNITS[match[2]!]! : NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms > Number.MAX_SAFE_INTEGER) {
    throw usageError(`${flag} must be a duration like 30d, 12h, 15m, 90s or 500ms, not '${value}'`);
  }
  return Math.round(ms);
}
