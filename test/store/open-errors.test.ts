/**
 * Opening a bad path fails alone and clearly: a `BatonError` naming the path (`store.open_failed`,
 * `store.not_baton` or `store.corrupt`), the file left as it was, no migration half applied.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BatonError, createRuntime, createScriptedPlanner } from '../../src/index.js';
import { openDatabase } from '../../src/store/index.js';
import { tempDir } from '../helpers/temp.js';

function openError(path: string): BatonError {
  try {
    const db = openDatabase(path);
    db.sqlite.close();
  } catch (error) {
    expect(error).toBeInstanceOf(BatonError);
    return error as BatonError;
  }
  throw new Error(`Opening '${path}' did not fail`);
}

describe('opening a database file', () => {
  it('refuses a directory', () => {
    const dir = tempDir();
    const error = openError(dir);
    expect(error.failure).toMatchObject({ code: 'store.open_failed', details: { path: dir } });
    expect(error.failure.message).toContain(dir);
  });

  it('refuses a path under a regular file', () => {
    const file = join(tempDir(), 'plain.txt');
    writeFileSync(file, 'hello');
    const error = openError(join(file, 'baton.db'));
    expect(error.failure.code).toBe('store.open_failed');
    expect(error.failure.message).toContain(file);
  });

  it('refuses a file that is not SQLite, and leaves it as it was', () => {
    const file = join(tempDir(), 'notes.db');
    writeFileSync(file, 'these are my notes, not a database\n'.repeat(200));
    const before = readFileSync(file);
    const error = openError(file);
    expect(error.failure).toMatchObject({ code: 'store.corrupt', details: { path: file } });
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('refuses a truncated database', () => {
    const file = join(tempDir(), 'baton.db');
    const db = openDatabase(file);
    db.sqlite.pragma('journal_mode = DELETE');
    db.sqlite.close();
    const whole = readFileSync(file);
    writeFileSync(file, whole.subarray(0, Math.floor(whole.length / 3)));
    expect(openError(file).failure.code).toBe('store.corrupt');
  });

  it("refuses another application's database that has a runs table of its own, and changes nothing", () => {
    const file = join(tempDir(), 'app.db');
    const other = new SQLite(file);
    other.exec('create table runs (id integer primary key, distance_km real)');
    other.prepare('insert into runs (distance_km) values (?)').run(5.2);
    other.close();
    const error = openError(file);
    expect(error.failure).toMatchObject({ code: 'store.not_baton', details: { path: file } });
    const again = new SQLite(file, { readonly: true });
    const tables = again.prepare("select name from sqlite_master where type = 'table' order by name").all();
    again.close();
    expect(tables).toEqual([{ name: 'runs' }]);
  });

  it('refuses a read-only file with a clear error', () => {
    const dir = tempDir();
    const file = join(dir, 'baton.db');
    openDatabase(file).sqlite.close();
    chmodSync(file, 0o444);
    chmodSync(dir, 0o555);
    try {
      // Root may write anyway; then the open succeeds and there is nothing to refuse.
      let error: BatonError | undefined;
      try {
        openDatabase(file).sqlite.close();
      } catch (thrown) {
        error = thrown as BatonError;
      }
      if (error) {
        expect(error).toBeInstanceOf(BatonError);
        expect(error.failure).toMatchObject({ code: 'store.open_failed', details: { path: file } });
      } else {
        expect(process.getuid?.()).toBe(0);
      }
    } finally {
      chmodSync(dir, 0o755);
      chmodSync(file, 0o644);
    }
  });

  it('refuses through createRuntime too, with the same error', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'sub'));
    expect(() => createRuntime({ database: join(dir, 'sub'), planner: createScriptedPlanner([]), tools: [] })).toThrow(
      BatonError,
    );
  });
});
