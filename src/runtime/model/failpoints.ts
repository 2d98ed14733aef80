/**
 * Named failpoints for crash tests. Off unless `BATON_FAILPOINTS` is set (and never when
 * NODE_ENV is `production`): `BATON_FAILPOINTS="tool.started=kill,planner.answered=throw@2"`
 * kills the process with SIGKILL, or throws, at the n-th time (default the first) a point is hit.
 * With `BATON_FAILPOINTS_LOG=<file>`, each firing is appended to that file first, so a test can
 * tell that the point really fired.
 */
import { appendFileSync } from 'node:fs';

/** Every place a crash test can stop the runtime. */
export const FAILPOINTS = [
  /** The run row and `run.created` are committed; the caller has not been answered. */
  'run.created',
  /** The planner answered; nothing of the answer is saved. */
  'planner.answered',
  /** A model's answer to a step of `read` calls only is committed on its own (planners that are not cheap); the transition it causes is not. */
  'planner.journaled',
  /** The decision is made and staged (durable with the next commit); its calls are not validated. */
  'step.validating',
  /** A call needs approval; the approval request is not staged. */
  'approval.requesting',
  /** A human decision is committed; the run has not resumed. */
  'approval.committed',
  /** The `started` row is durable (for non-read tools); the tool has not run. */
  'tool.started',
  /** The tool returned; its result is staged, not committed. */
  'tool.returned',
  /** A commit is durable; its events are not published. */
  'commit.publishing',
  /** Inside the transaction that would make the run terminal, before its snapshot is written. */
  'run.terminal',
  /** Inside the unit that creates a fork: its row and events are written, its copied steps and ledger not yet. */
  'fork.copying',
  /** A call of an agent tool is about to create its child run: nothing of the child is written. */
  'child.starting',
  /** The child run's row and `run.created` are committed; the parent does not wait on it yet. */
  'child.created',
  /** A child run's end is durable; its parent has not taken its outcome. */
  'child.ended',
  /** A step's handoff call settled and the stack it leaves is known; none of it is committed. */
  'handoff.settled',
  /** A call saved the handle of work it started elsewhere (an MCP task), durably; it has not waited for it. */
  'tool.handle_saved',
  /** A poll of a call's work elsewhere (a task wait) found it still going; the next poll is not committed. */
  'task.polled',
  /** A poll found a call's work elsewhere ended; the call's outcome is not committed. */
  'task.ended',
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
  const log = process.env.BATON_FAILPOINTS_LOG;
  if (log) appendFileSync(log, `${name}=${point.action}@${point.at}\n`);
  if (point.action === 'kill') process.kill(process.pid, 'SIGKILL');
  throw new FailpointError(`Failpoint '${name}' fired`);
}
