/**
 * Leases: which runtime drives which run. A run is claimed when it is free, expired, or its
 * owner is known dead (a process on this host that no longer exists, or a runtime of this
 * process that was closed), so a restart after SIGKILL resumes at once while a live second
 * runtime on the same file never drives the same run twice. A runtime renews its leases every
 * third of their length, so they lapse only when it is gone.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { HeldRun, Store } from '../../store/index.js';

const LIVE_INSTANCES = new Set<string>();

/** A new owner id for a runtime of this process: `host:pid:instance`. */
export function newOwner(): string {
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  LIVE_INSTANCES.add(owner);
  return owner;
}

/** Marks an owner as gone (its runtime closed). */
export function retireOwner(owner: string): void {
  LIVE_INSTANCES.delete(owner);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when an owner id names a runtime that cannot be running any more. */
export function isDeadOwner(owner: string): boolean {
  const [host, pidText] = owner.split(':');
  if (host !== hostname()) return false;
  const pid = Number(pidText);
  if (pid === process.pid) return !LIVE_INSTANCES.has(owner);
  return !processAlive(pid);
}

/** Runs whose leases one statement renews. */
const RENEW_BATCH = 500;

/**
 * Renews, every third of their length, the leases of the runs `owner` drives now (`driving()`),
 * a batch per statement, each batch on its own turn of the event loop; a renewal still under
 * way when the next one is due is not started twice. A run whose lease did not renew was claimed
 * by another runtime: `lost` is told, and stops driving it; a run another runtime asked to cancel
 * or to pause is passed to `asked`. Returns the function that stops it.
 */
export function startHeartbeat(
  store: Store,
  owner: string,
  leaseMs: number,
  driving: () => string[],
  lost: (ids: string[]) => void,
  asked: (run: HeldRun) => void = () => undefined,
  onError: (error: unknown) => void = () => undefined,
): () => void {
  let stopped = false;
  let renewing = false;
  const renew = async () => {
    if (renewing || stopped) return;
    renewing = true;
    try {
      const ids = driving();
      for (let i = 0; i < ids.length && !stopped; i += RENEW_BATCH) {
        if (i > 0) await new Promise((resolve) => setImmediate(resolve));
        const batch = ids.slice(i, i + RENEW_BATCH);
        const renewed = await store.renewLeases(owner, leaseMs, batch);
        const held = new Set(renewed.map((run) => run.id));
        const gone = batch.filter((id) => !held.has(id));
        if (gone.length > 0 && !stopped) lost(gone);
        for (const run of renewed) if ((run.cancel_requested || run.pause_requested) && !stopped) asked(run);
      }
    } catch (error) {
      // A renewal that failed (the database away for a moment) is tried again on the next beat.
      if (!stopped) onError(error);
    } finally {
      renewing = false;
    }
  };
  const heartbeat = setInterval(() => void renew(), leaseMs / 3);
  heartbeat.unref();
  return () => {
    stopped = true;
    clearInterval(heartbeat);
  };
}
