/**
 * The reads of a run beyond its row: its planner steps, its ledger, its trace, its approvals,
 * its artifacts, a page of its events, where its snapshot stands. Each answers `run.not_found`
 * for a run that does not exist, and reads only what is committed.
 */
import { randomBytes } from 'node:crypto';
import { fail, quoteId } from '../../failure.js';
import type { Store } from '../../store/index.js';
import type { AnyTool } from '../../tools/define-tool.js';
import { artifactOf, artifactsOf } from '../ledger/artifacts.js';
import { toApproval, toEvent, toStep, toToolCall } from '../model/rows.js';
import { buildTrace, type Trace } from '../observe/trace.js';
import type {
  Approval,
  Artifact,
  ArtifactRef,
  Checkpoint,
  FeedEvent,
  Run,
  RunEventRecord,
  Step,
  ToolCall,
} from '../model/types.js';

/** What the reads need from the runtime. */
export interface RunReadsDeps {
  store: Store;
  tools: ReadonlyMap<string, AnyTool>;
  /** The runtime's agent: its tools describe (risk, origin) the calls of its own runs only. */
  agent: string;
  /** The run as `Runtime.get` reports it. */
  get(runId: string): Promise<Run>;
}

/** The runtime's read members (see `Runtime`). */
export function createRunReads({ store, tools, agent, get }: RunReadsDeps) {
  /** A run's row, or `run.not_found`. */
  async function rowOf(runId: string) {
    const row = await store.getRun(runId);
    if (!row) fail('run.not_found', `Run ${quoteId(runId)} does not exist`);
    return row;
  }

  return {
    /** The planner steps of a run: each decision, its usage and its context report. */
    async steps(runId: string): Promise<Step[]> {
      await rowOf(runId);
      return (await store.listSteps(runId)).map(toStep);
    },

    /** The tool-call ledger of a run, in step and call order; compensations after the calls, newest call first. */
    async toolCalls(runId: string): Promise<ToolCall[]> {
      const run = await rowOf(runId);
      // Another agent's tool of the same name is not this call's tool: its risk would be a guess.
      const known = run.agent === null || run.agent === agent ? tools : new Map<string, AnyTool>();
      const rows = (await store.listToolCalls(runId)).map((row) => toToolCall(row, known.get(row.tool)));
      const calls = rows.filter((c) => c.compensates === null);
      // Made newest call first: later steps first, and in a step the higher call (index −1 − i) first.
      const undone = rows
        .filter((c) => c.compensates !== null)
        .sort((a, b) => b.stepIndex - a.stepIndex || a.callIndex - b.callIndex);
      return [...calls, ...undone];
    },

    /** The trace of a run: steps and timed spans built from its committed events. */
    async trace(runId: string): Promise<Trace> {
      const run = await get(runId);
      const [events, steps] = await Promise.all([
        store.listEvents(runId, 0, Number.MAX_SAFE_INTEGER),
        store.listSteps(runId),
      ]);
      return buildTrace(run, steps.map(toStep), events.map(toEvent));
    },

    /** The approvals of a run, oldest first. */
    async approvals(runId: string): Promise<Approval[]> {
      await rowOf(runId);
      return (await store.listApprovals(runId)).map(toApproval);
    },

    /** What a run stored as artifacts, in order. */
    async artifacts(runId: string): Promise<ArtifactRef[]> {
      await rowOf(runId);
      return artifactsOf(store, runId);
    },

    /** The bytes of an artifact the run stored. */
    async artifact(runId: string, sha256: string): Promise<Artifact> {
      await rowOf(runId);
      return artifactOf(store, runId, sha256);
    },

    /** A page of a run's committed events. */
    async readEvents(runId: string, opts: { after?: number; limit?: number } = {}): Promise<RunEventRecord[]> {
      await rowOf(runId);
      const limit = Math.min(Math.max(opts.limit ?? 1_000, 1), 10_000);
      return (await store.listEvents(runId, opts.after ?? 0, limit)).map(toEvent);
    },

    /** A page of the feed: every run's `run.created` and `state` events, by position. */
    async readFeed(opts: { after?: number; limit?: number; tenantId?: string } = {}): Promise<FeedEvent[]> {
      const limit = Math.min(Math.max(opts.limit ?? 1_000, 1), 10_000);
      const rows = await store.readFeed(opts.after ?? 0, limit, opts.tenantId ?? null);
      return rows.map((row) => ({ ...toEvent(row), position: row.position }));
    },

    /** The feed's highest position so far. */
    async feedHead(): Promise<number> {
      return store.feedHead();
    },

    /** A random secret kept in the database under `name`, the same for every runtime on it. */
    async sharedSecret(name: string): Promise<string> {
      return store.sharedSecret(name, randomBytes(32).toString('base64url'));
    },

    /** Where a run's persisted snapshot stands. */
    async checkpoint(runId: string): Promise<Checkpoint> {
      const row = await rowOf(runId);
      return {
        version: row.version,
        bytes: Buffer.byteLength(row.snapshot),
        machine: { name: row.machine_name, version: row.machine_version },
      };
    },
  };
}
