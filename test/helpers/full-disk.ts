/**
 * A real disk that fills up: a 4 MiB tmpfs mounted on a temp directory (root only), a filler file
 * written until the file system answers ENOSPC, and removed to give the space back. Unmounted
 * after the test. Where mounting is not allowed the tests that need it skip, except in CI, where
 * they must run.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { tempDir } from './temp.js';

const mounted: string[] = [];

afterEach(() => {
  for (const dir of mounted.splice(0)) execFileSync('umount', ['-l', dir]);
});

/** True when this process may mount a tmpfs (root on Linux). */
export const canMountTmpfs = ((): boolean => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  try {
    const dir = tempDir();
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir]);
    return true;
  } catch {
    return false;
  }
})();

if (!canMountTmpfs && process.env.CI) throw new Error('CI: the full-disk tests need to mount a tmpfs (run as root)');

/** A small file system of its own: `fill()` leaves it without a free byte, `free()` gives the space back. */
export interface SmallDisk {
  dir: string;
  fill(): void;
  free(): void;
}

/** Mounts a tmpfs of `size` (4m by default) on a fresh temp directory. */
export function smallDisk(size = '4m'): SmallDisk {
  const dir = tempDir();
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  mounted.push(dir);
  const filler = join(dir, 'filler');
  return {
    dir,
    fill(): void {
      const fd = openSync(filler, 'a');
      try {
        // Large chunks first, then smaller ones, until not one byte more fits.
        for (let chunk = 64 * 1024; chunk >= 1; chunk = Math.floor(chunk / 4)) {
          const bytes = Buffer.alloc(chunk, 1);
          for (;;) {
            try {
              writeSync(fd, bytes);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free(): void {
      rmSync(filler, { force: true });
    },
  };
}
