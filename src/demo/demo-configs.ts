/** The demo's input: a small directory of service configs, some stale and some fresh. */
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DAY_MS = 86_400_000;

/** A config not updated for this many days is stale and may be archived. */
export const STALE_AFTER_DAYS = 90;

/** The generated configs and how many days ago each was last updated. */
export const DEMO_CONFIGS = [
  { name: 'service-a.json', owner: 'team-payments', ageDays: 2 },
  { name: 'service-b.json', owner: 'team-search', ageDays: 412 },
  { name: 'service-c.json', owner: 'team-identity', ageDays: 9 },
  { name: 'service-d.json', owner: 'team-search', ageDays: 188 },
  { name: 'service-e.json', owner: 'team-billing', ageDays: 31 },
  { name: 'service-f.json', owner: 'team-legacy', ageDays: 730 },
] as const;

/** True when a timestamp is older than the stale cut-off at `now`. */
export function isStale(timeMs: number, now: number): boolean {
  return now - timeMs > STALE_AFTER_DAYS * DAY_MS;
}

/**
 * Writes the demo configs into `dir` where they are missing (so configs a previous run archived
 * come back), and rewrites a fresh one that has aged past the cut-off; returns the names written.
 */
export function ensureDemoConfigs(dir: string, now = Date.now()): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const config of DEMO_CONFIGS) {
    const path = join(dir, config.name);
    const stale = config.ageDays > STALE_AFTER_DAYS;
    if (existsSync(path) && (stale || !isStale(statSync(path).mtimeMs, now))) continue;
    const updatedAt = new Date(now - config.ageDays * DAY_MS);
    const body = {
      service: config.name.replace(/\.json$/, ''),
      owner: config.owner,
      replicas: 2,
      updated_at: updatedAt.toISOString(),
    };
    writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`);
    // The file's mtime tells the same story as its `updated_at`.
    utimesSync(path, updatedAt, updatedAt);
    written.push(config.name);
  }
  return written;
}
