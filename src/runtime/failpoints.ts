/**
 * Named failpoints for crash tests. Off unless `BATON_FAILPOINTS` is set (and never when
 * NODE_ENV is `production`): `BATON_FAILPOINTS="tool.started=kill,planner.answered=throw@2"`
 * kills the process with SIGKILL, or throws, at the n-th time (default the first) a point is hit.
 */

/** Every place a crash test can stop the runtime. */
export const FAILPOINTS = [
  'run.created',
  'planner.answered',
  'tool.started',
  'tool.returned',
  'approval.committed',
] as const;
export type FailpointName = (typeof FAILPOINTS)[number];

interface Armed {
  action: 'kill' | 'throw';
  at: number;
  hits: number;
}

function parse(spec: string | undefined): Map<string, Armed> | null {
  if (!spec || process.env.NODE_ENV === 'production') return null;
  const armed = new Map<string, Armed>();
  for (const part of spec.split(',')) {
    const match = /^\s*([\w.]+)=(kill|throw)(?:@(\d+))?\s*$/.exec(part);
    if (!match) throw new Error(`Invalid BATON_FAILPOINTS entry '${part}'`);
    armed.set(match[1]!, { action: match[2] as Armed['action'], at: Number(match[3] ?? 1), hits: 0 });
  }
  return armed;
}

const armed = parse(process.env.BATON_FAILPOINTS);

/** Error thrown by a failpoint armed with `throw`. */
export class FailpointError extends Error {}

/** Stops here if this failpoint is armed. */
export function failpoint(name: FailpointName): void {
  if (armed === null) return;
  const point = armed.get(name);
  if (!point) return;
  point.hits += 1;
  if (point.hits !== point.at) return;
  if (point.action === 'kill') process.kill(process.pid, 'SIGKILL');
  throw new FailpointError(`Failpoint '${name}' fired`);
}
