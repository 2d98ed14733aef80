/** Durations on the command line: `30d`, `12h`, `15m`, `90s`, `500ms`, or a number of milliseconds. */
import { usageError } from './cli-error.js';

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** The milliseconds `value` names; a usage error naming `flag` otherwise. */
export function toDurationMs(value: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/.exec(value.trim());
  const ms = match ? Number(match[1]) * UNITS[match[2] ?? 'ms']! : NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms > Number.MAX_SAFE_INTEGER) {
    throw usageError(`${flag} must be a duration like 30d, 12h, 15m, 90s or 500ms, not '${value}'`);
  }
  return Math.round(ms);
}
