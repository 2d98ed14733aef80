/** Temp directories and database files for tests: real files, never `:memory:`. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp directory, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-test-'));
  dirs.push(dir);
  return dir;
}

/** A fresh database path and an effects file path in a new temp directory. */
export function tempFiles(): { db: string; effects: string; dir: string } {
  const dir = tempDir();
  return { dir, db: join(dir, 'baton.db'), effects: join(dir, 'effects.jsonl') };
}
