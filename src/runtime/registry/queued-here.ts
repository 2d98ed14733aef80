/**
 * The queued runs a runtime that drives runs but claims none (the command line's, which drives
 * only what it starts) started, driven here once it is their turn. (A claiming runtime gets them
 * from its claim loop, and only from there: two claims of one run here would fence each other.)
 * It looks when told that runs need driving (a notification, or this process's own write that
 * handed a session on), and every second while it has any, for a turn another process gave.
 */
import { toFailure, type Failure } from '../../failure.js';
import type { Claim, Store } from '../../store/index.js';
import type { BackgroundErrorContext, RunRegistry } from './run-registry.js';
import { isDeadOwner } from '../drive/leases.js';

/** What looking after a runtime's own queued runs needs. */
export interface QueuedHereDeps {
  store: Store;
  owner: string;
  leaseMs: number;
  /** Drives a run this runtime claimed. */
  adopt(claim: Claim): Promise<void>;
  /** True when the run is driven here already. */
  has(runId: string): boolean;
  isClosed(): boolean;
  onError(error: unknown): void;
}

/** Looks every second for a turn given elsewhere. */
const LOOK_EVERY_MS = 1_000;

/** The queued runs of one runtime. */
export function createQueuedHere(deps: QueuedHereDeps) {
  const ids = new Set<string>();
  let timer: ReturnType<typeof setInterval> | null = null;
  let looking = false;
  let again = false;

  async function lookAt(id: string): Promise<void> {
    if (deps.has(id)) {
      ids.delete(id);
      return;
    }
    const row = await deps.store.getRun(id);
    if (row?.status === 'queued') return;
    // Ended (cancelled while queued), claimed by another runtime, or its turn: it leaves the set.
    ids.delete(id);
    if (row?.status !== 'pending' || row.owner !== null) return;
    const epoch = await deps.store.claimRun(id, deps.owner, deps.leaseMs, isDeadOwner);
    if (epoch !== null) await deps.adopt({ id, epoch });
  }

  async function look(): Promise<void> {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      do {
        again = false;
        for (const id of [...ids]) {
          if (deps.isClosed()) return;
          await lookAt(id);
        }
      } while (again);
    } catch (error) {
      if (!deps.isClosed()) deps.onError(error);
    } finally {
      looking = false;
      if (ids.size === 0 && timer) {
        clearInterval(timer);
        timer = null;
      }
    }
  }

  return {
    /** A run started here was queued: drive it once it is its turn. */
    add(runId: string): void {
      ids.add(runId);
      timer ??= setInterval(() => void look(), LOOK_EVERY_MS);
      void look();
    },
    /** Runs may need driving: look now. */
    poke(): void {
      if (ids.size > 0) void look();
    },
    stop(): void {
      ids.clear();
      if (timer) clearInterval(timer);
      timer = null;
    },
  };
}

/**
 * The runtime's own queued runs, looked after when the runtime drives runs but claims none (as
 * `startUp` decides: one that drives and recovers claims); returns what `start` tells of a
 * queued run. Stops when the runtime closes.
 */
export function watchQueuedHere(
  options: {
    drive?: boolean | undefined;
    claim?: boolean | undefined;
    recover?: boolean | undefined;
    onError?: ((failure: Failure, where: BackgroundErrorContext) => void) | undefined;
  },
  deps: {
    store: Store;
    owner: string;
    leaseMs: number;
    registry: Pick<RunRegistry, 'adopt' | 'has'>;
    isClosed(): boolean;
    onClose: Set<() => void>;
  },
): (runId: string) => void {
  const drive = options.drive !== false;
  if (!drive || (options.claim ?? options.recover !== false)) return () => undefined;
  const queued = createQueuedHere({
    store: deps.store,
    owner: deps.owner,
    leaseMs: deps.leaseMs,
    adopt: (claim) => deps.registry.adopt(claim),
    has: (runId) => deps.registry.has(runId),
    isClosed: deps.isClosed,
    onError: (error) => options.onError?.(toFailure(error), { activity: 'starting a queued run' }),
  });
  const unlisten = deps.store.listen((note) => {
    if (note.kind === 'runs') queued.poke();
  });
  deps.onClose.add(() => {
    unlisten();
    queued.stop();
  });
  return (runId) => queued.add(runId);
}
