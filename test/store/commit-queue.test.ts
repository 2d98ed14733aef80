/**
 * Group commit without long stalls: a burst of writers is committed in bounded transactions, a
 * turn of the event loop apart, and each writer resolves when its own transaction commits.
 */
import SQLite from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommitQueue, MAX_BATCH_UNITS } from '../../src/store/commit-queue.js';
import { tempDir } from '../helpers/temp.js';
import { turnCounter } from '../helpers/turns.js';

function openFile() {
  const sqlite = new SQLite(join(tempDir(), 'queue.db'));
  sqlite.pragma('journal_mode = WAL');
  sqlite.exec('create table rows (id integer primary key, v text)');
  return sqlite;
}

describe('commit queue', () => {
  it('commits a burst in bounded transactions and resolves each writer with its own commit', async () => {
    const sqlite = openFile();
    const queue = createCommitQueue(sqlite);
    const insert = sqlite.prepare('insert into rows (v) values (?)');
    const writers = 3 * MAX_BATCH_UNITS + 10;
    // Turns of the event loop taken while the burst is committed.
    const counter = turnCounter();
    const resolvedAt: number[] = [];
    await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        queue.write(() => insert.run(String(i))).then(() => resolvedAt.push(queue.commits)),
      ),
    );
    const turns = counter.stop();
    // At most MAX_BATCH_UNITS writers a transaction (fewer if one ran out of time).
    expect(queue.commits).toBeGreaterThanOrEqual(4);
    // The first writer was told as soon as the first transaction committed, not at the end,
    // and every writer in order of its own commit.
    expect(resolvedAt[0]).toBe(1);
    expect(resolvedAt.at(-1)).toBe(queue.commits);
    expect([...resolvedAt].sort((a, b) => a - b)).toEqual(resolvedAt);
    expect(new Set(resolvedAt).size).toBe(queue.commits);
    // Other work ran between the transactions.
    expect(turns).toBeGreaterThanOrEqual(queue.commits - 1);
    expect(sqlite.prepare('select count(*) from rows').pluck().get()).toBe(writers);
    sqlite.close();
  });

  it('commits all that is queued when flushed at once (close)', () => {
    const sqlite = openFile();
    const queue = createCommitQueue(sqlite);
    const insert = sqlite.prepare('insert into rows (v) values (?)');
    for (let i = 0; i < 2 * MAX_BATCH_UNITS; i += 1) void queue.write(() => insert.run(String(i)));
    queue.flushNow();
    expect(sqlite.prepare('select count(*) from rows').pluck().get()).toBe(2 * MAX_BATCH_UNITS);
    sqlite.close();
  });

  it('rolls back only the writes of a writer that throws, alone in its transaction or beside others', async () => {
    const sqlite = openFile();
    const queue = createCommitQueue(sqlite);
    const insert = sqlite.prepare('insert into rows (v) values (?)');
    const count = () => sqlite.prepare('select count(*) from rows').pluck().get();
    const failing = () => {
      insert.run('lost');
      throw new Error('conflict');
    };
    // Alone: its transaction is rolled back, nothing of it is left, and the queue goes on.
    await expect(queue.write(failing)).rejects.toThrow('conflict');
    expect(sqlite.inTransaction).toBe(false);
    expect(count()).toBe(0);
    await queue.write(() => insert.run('kept'));
    expect(count()).toBe(1);
    // Beside others in one transaction: only its own writes go.
    const outcomes = await Promise.allSettled([
      queue.write(() => insert.run('a')),
      queue.write(failing),
      queue.write(() => insert.run('b')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(sqlite.prepare('select v from rows order by id').pluck().all()).toEqual(['kept', 'a', 'b']);
    sqlite.close();
  });
});
