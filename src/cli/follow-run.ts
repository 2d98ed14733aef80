/**
 * Following a run to its end in the terminal: every event printed as it comes, and each wait
 * put to the user once the run is durably waiting: an approval (or `--approve` / `--reject`),
 * a question (a line read from the terminal or from piped stdin), a budget that ran out (left for
 * `baton extend` / `baton end`, or ended with `--reject`).
 */
import type { EventJson } from './api-json.js';
import { answerFromText, describeQuestion, type QuestionShape } from './answer-text.js';
import { askYesNo, pipedLines, terminalLines, type LineSource } from './ask.js';
import type { Backend } from './backend.js';
import { toCliFailure } from './cli-error.js';
import type { CliIo } from './cli-io.js';
import { createEventPrinter } from './event-printer.js';
import { terminalText } from './terminal-text.js';

/** Who decides approvals: the flags, else the user at a terminal, else nobody (the run is left waiting). */
export type Decider = 'approve' | 'reject' | 'ask';

/** How a follow ended. */
export type FollowOutcome =
  | { kind: 'ended' }
  | { kind: 'waiting'; approvalId: string; waitReason: string; forbidden: boolean }
  | { kind: 'interrupted' };

type Verdict = 'approve' | 'reject' | 'leave' | 'interrupted';

/** Failures that mean someone (or the expiry) decided first: the follow goes on with what they chose. */
const DECIDED_ELSEWHERE: ReadonlySet<string> = new Set(['approval.already_decided', 'approval.expired']);

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

interface FollowOptions {
  decider: Decider;
  json: boolean;
  signal: AbortSignal;
  /** How deep in a tree of runs the followed run is (0: the one asked for): its lines are indented by it. */
  depth?: number;
}

/** `forbidden`: the caller may not decide this wait (a role it lacks); it is left for one who may. */
type WaitOutcome = 'decided' | 'leave' | 'forbidden' | 'interrupted';

/**
 * Sends a decision; a wait someone else decided first (another terminal, a reviewer over HTTP,
 * its expiry) or that this caller may not decide is reported, and the follow goes on or leaves it.
 */
async function send(io: CliIo, decide: () => Promise<unknown>): Promise<WaitOutcome> {
  try {
    await decide();
    return 'decided';
  } catch (error) {
    return refused(io, error);
  }
}

/** What a refused decision means for the follow (see `send`); any other failure is thrown. */
function refused(io: CliIo, error: unknown): WaitOutcome {
  const failure = toCliFailure(error);
  if (!DECIDED_ELSEWHERE.has(failure.code) && failure.code !== 'auth.forbidden') throw error;
  io.stderr.write(`baton: ${terminalText(failure.message)}\n`);
  return failure.code === 'auth.forbidden' ? 'forbidden' : 'decided';
}

/**
 * A question of the run: with `--reject` it is declined (the model is told); else a line is read
 * (from the terminal, or from piped stdin) and sent as the answer, asked again while the answer
 * does not fit. No line (end of input, an empty line), `--json` or no stdin leaves it waiting.
 */
async function answerQuestion(
  backend: Backend,
  runId: string,
  inputId: string,
  question: EventJson | undefined,
  options: FollowOptions,
  lines: () => LineSource | undefined,
  io: CliIo,
): Promise<WaitOutcome> {
  if (options.decider === 'reject') {
    const reason = 'declined with --reject';
    return send(io, () => backend.decide(runId, inputId, { decision: 'reject', reason }));
  }
  const source = options.json ? undefined : lines();
  if (!source) return 'leave';
  const shape = (question?.data ?? {}) as { question?: string } & QuestionShape;
  io.stdout.write(terminalText(`Question: ${describeQuestion({ ...shape, question: shape.question ?? '?' })}\n`));
  for (;;) {
    const line = await source.read('Your answer: ');
    if (line.kind === 'interrupted') return 'interrupted';
    if (line.kind === 'none' || line.text.trim() === '') return 'leave';
    try {
      await backend.answer(runId, inputId, { answer: answerFromText(line.text, shape) });
      return 'decided';
    } catch (error) {
      const failure = toCliFailure(error);
      if (failure.code !== 'input.invalid') return refused(io, error);
      io.stderr.write(`baton: ${terminalText(failure.message)}; try again (an empty line leaves it waiting)\n`);
    }
  }
}

/** An approval of the run (a step's, a policy's escalation, an interrupted call): asked y/N, or as the flags say. */
async function decideApproval(
  backend: Backend,
  runId: string,
  approvalId: string,
  request: EventJson | undefined,
  options: FollowOptions,
  io: CliIo,
): Promise<WaitOutcome> {
  // An operator paused the run on purpose: whoever follows it leaves it so (`baton resume` goes on).
  if (request?.data.reason === 'paused') return 'leave';
  if (request?.data.reason === 'budget') {
    // New limits are numbers a person chooses: `baton extend` says them; --reject ends the run.
    if (options.decider !== 'reject') return 'leave';
    return send(io, () => backend.decide(runId, approvalId, { decision: 'end', reason: 'ended with --reject' }));
  }
  const verdict = await verdictOf(options.decider, request, io, options.json);
  if (verdict === 'interrupted' || verdict === 'leave') return verdict;
  const reason =
    options.decider === 'ask'
      ? 'declined at the prompt'
      : `${verdict === 'approve' ? 'approved' : 'rejected'} with --${verdict}`;
  return send(io, () =>
    backend.decide(runId, approvalId, { decision: verdict, ...(verdict === 'reject' ? { reason } : {}) }),
  );
}

/** Prints the events of `runId` until it ends, deciding its waits on the way. */
export async function followRun(
  backend: Backend,
  runId: string,
  options: FollowOptions,
  io: CliIo,
): Promise<FollowOutcome> {
  const printer = createEventPrinter(io, options.json, '    '.repeat(options.depth ?? 0));
  const requests = new Map<string, EventJson>();
  let source: LineSource | undefined;
  // Made on the first question: reading stdin before then would take lines meant for later.
  const lines = () => {
    if (!source && io.interactive) source = terminalLines(io.stdin, io.stdout);
    if (!source && io.piped) source = pipedLines(io.stdin, io.stdout, options.signal);
    return source;
  };
  /** The child run the last call of an agent tool started. */
  let child: string | undefined;
  try {
    for await (const event of backend.events(runId, { follow: true, signal: options.signal })) {
      printer.print(event);
      if (event.type === 'child' && event.data.status === 'started') child = String(event.data.child_run_id);
      if (event.type === 'state' && event.data.to === 'waiting_human' && event.data.wait_reason === 'child' && child) {
        // The child does the work (and asks what it asks): followed, its waits decided, until it ends.
        printer.breakLine();
        const inner = await followRun(backend, child, { ...options, depth: (options.depth ?? 0) + 1 }, io);
        if (inner.kind !== 'ended') return inner;
        continue;
      }
      // Waiting for a call's work elsewhere (a task): the runtime polls it, no one decides it.
      if (event.type === 'state' && event.data.to === 'waiting_human' && event.data.wait_reason === 'task') continue;
      // Paused by an operator on purpose: whoever follows the run leaves it so (`baton resume` goes on).
      if (event.type === 'state' && event.data.to === 'waiting_human' && event.data.wait_reason === 'paused') {
        return { kind: 'waiting', approvalId: String(event.data.approval_id), waitReason: 'paused', forbidden: false };
      }
      if (event.type === 'approval_request') requests.set(String(event.data.approval_id), event);
      if (event.type === 'input_request') requests.set(String(event.data.input_id), event);
      // Decide once the run is durably waiting: the `state` event carries the wait's id. A
      // question a call asks in flight is committed with its event, and the run goes on executing.
      const inFlight =
        event.type === 'input_request' && (event.data.from as { in_flight?: unknown } | null)?.in_flight === true;
      if (!inFlight && (event.type !== 'state' || event.data.to !== 'waiting_human')) continue;
      const waitId = String(inFlight ? event.data.input_id : event.data.approval_id);
      const waitReason = inFlight ? 'input' : String(event.data.wait_reason);
      const outcome =
        waitReason === 'input'
          ? await answerQuestion(backend, runId, waitId, requests.get(waitId), options, lines, io)
          : await decideApproval(backend, runId, waitId, requests.get(waitId), options, io);
      if (outcome === 'interrupted') return { kind: 'interrupted' };
      if (outcome === 'leave' || outcome === 'forbidden') {
        return { kind: 'waiting', approvalId: waitId, waitReason, forbidden: outcome === 'forbidden' };
      }
    }
  } finally {
    source?.close();
  }
  printer.breakLine();
  return options.signal.aborted ? { kind: 'interrupted' } : { kind: 'ended' };
}
