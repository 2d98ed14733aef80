/**
 * CPU accounting around a measurement: this process's CPU time, and how much CPU the rest of
 * the machine used meanwhile (Linux `/proc/stat`), so numbers taken under contention show it.
 */
import { readFileSync } from 'node:fs';

/** A point in time with this process's CPU time and the machine's busy time, both in ms. */
export interface CpuSample {
  at: number;
  ownMs: number;
  /** Busy time summed over every CPU, or null where `/proc/stat` does not exist. */
  machineMs: number | null;
}

// USER_HZ: the unit of /proc/stat; 100 on every mainstream Linux build.
const MS_PER_TICK = 10;

function machineBusyMs(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // cpu  user nice system idle iowait irq softirq steal …: idle and iowait are not busy.
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((sum, t) => sum + (t ?? 0), 0);
    return busy * MS_PER_TICK;
  } catch {
    return null;
  }
}

/** Takes a sample now. */
export function sampleCpu(): CpuSample {
  const { user, system } = process.cpuUsage();
  return { at: performance.now(), ownMs: (user + system) / 1_000, machineMs: machineBusyMs() };
}

/** What happened between two samples: this process's CPU ms, and the other processes' load in CPUs. */
export function cpuBetween(from: CpuSample, to: CpuSample): { ownMs: number; otherCpus: number | null } {
  const ownMs = to.ownMs - from.ownMs;
  if (from.machineMs === null || to.machineMs === null) return { ownMs, otherCpus: null };
  const otherMs = Math.max(0, to.machineMs - from.machineMs - ownMs);
  return { ownMs, otherCpus: otherMs / (to.at - from.at) };
}
