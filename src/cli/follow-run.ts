/**
 * Following a run to its end in the terminal: every event printed as it comes, and each
 * approval put to the user (or decided by `--approve` / `--reject`) once the run is durably waiting.
 */
import type { EventJson } from './api-json.js';
import { askYesNo } from './ask.js';
import type { Backend } from './backend.js';
import { toCliFailure } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { createEventPrinter } from './event-printer.js';
import { terminalText } from './terminal-text.js';

/** Who decides approvals: the flags, else the user at a terminal, else nobody (the run is left waiting). */
export type Decider = 'approve' | 'reject' | 'ask';

/** How a follow ended. */
export type FollowOutcome = { kind: 'ended' } | { kind: 'waiting'; approvalId: string } | { kind: 'interrupted' };

type Verdict = 'approve' | 'reject' | 'leave' | 'interrupted';

function describeCalls(request: EventJson | undefined): string {
  const calls = (request?.data.tool_calls as { tool?: unknown; args?: unknown }[] | undefined) ?? [];
  if (calls.length === 0) return 'the pending tool calls';
  const text = calls.map((c) => `${String(c.tool)} ${JSON.stringify(c.args ?? null)}`).join(', ');
  return terminalText(text.length > 200 ? `${text.slice(0, 199)}…` : text, { oneLine: true });
}

async function verdictOf(decider: Decider, request: EventJson | undefined, io: CliIo, json: boolean): Promise<Verdict> {
  if (decider !== 'ask') return decider;
  if (!io.interactive) return 'leave';
  const question =
    request?.data.reason === 'uncertain_side_effect'
      ? `Run again the interrupted call ${describeCalls(request)}? [y/N] `
      : `Approve ${describeCalls(request)}? [y/N] `;
  // In JSON mode stdout carries only JSON lines, so the question goes to stderr.
  const answer = await askYesNo(question, io.stdin, json ? io.stderr : io.stdout);
  if (answer === 'interrupted') return 'interrupted';
  return answer === 'yes' ? 'approve' : 'reject';
}

/** Prints the events of `runId` until it ends, deciding its approvals on the way. */
export async function followRun(
  backend: Backend,
  runId: string,
  options: { decider: Decider; json: boolean; signal: AbortSignal },
  io: CliIo,
): Promise<FollowOutcome> {
  const printer = createEventPrinter(io, options.json);
  const requests = new Map<string, EventJson>();
  for await (const event of backend.events(runId, { follow: true, signal: options.signal })) {
    printer.print(event);
    if (event.type === 'approval_request') requests.set(String(event.data.approval_id), event);
    // Decide once the run is durably waiting: the `state` event carries the approval's id.
    if (event.type !== 'state' || event.data.to !== 'waiting_human') continue;
    const approvalId = String(event.data.approval_id);
    const verdict = await verdictOf(options.decider, requests.get(approvalId), io, options.json);
    if (verdict === 'interrupted') return { kind: 'interrupted' };
    if (verdict === 'leave') return { kind: 'waiting', approvalId };
    const reason =
      options.decider === 'ask'
        ? 'declined at the prompt'
        : `${verdict === 'approve' ? 'approved' : 'rejected'} with --${verdict}`;
    try {
      await backend.decide(runId, approvalId, { decision: verdict, ...(verdict === 'reject' ? { reason } : {}) });
    } catch (error) {
      // Someone else (another terminal, a reviewer over HTTP) decided first: follow what they chose.
      const failure = toCliFailure(error);
      if (failure.code !== 'approval.already_decided') throw error;
      io.stderr.write(`baton: ${failure.message}\n`);
    }
  }
  printer.breakLine();
  return options.signal.aborted ? { kind: 'interrupted' } : { kind: 'ended' };
}
