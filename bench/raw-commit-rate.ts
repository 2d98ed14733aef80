/**
 * The physical reference: how many durable transactions per second this disk gives
 * better-sqlite3 with Baton's own opener (WAL, `synchronous=FULL`), one ~2 KB upsert each.
 */
import { openDatabase } from '../src/store/index.js';
import { cpuBetween, sampleCpu } from './machine-load.js';

/** What the raw reference measured. */
export interface RawCommitRate {
  transactions: number;
  seconds: number;
  perSecond: number;
  /** CPUs' worth of work done by other processes meanwhile (null if unknown). */
  otherCpus: number | null;
}

/** A ~2 KB JSON document, about what a checkpoint of a small run weighs with its row. */
function payload(i: number): string {
  return JSON.stringify({ i, filler: 'x'.repeat(2_000) });
}

/**
 * Commits one upsert per transaction for `durationMs` on a fresh file opened with `openDatabase`.
 * @example
 * const { perSecond } = measureRawCommitRate('/tmp/bench/raw.db', 2_000);
 */
export function measureRawCommitRate(path: string, durationMs: number, warmupMs = 200): RawCommitRate {
  const { sqlite } = openDatabase(path);
  try {
    sqlite.exec('create table bench_rows (id integer primary key, body text not null, version integer not null)');
    const upsert = sqlite.prepare(
      'insert into bench_rows (id, body, version) values (?, ?, 1) on conflict (id) do update set body = excluded.body, version = version + 1',
    );
    const commit = sqlite.transaction((i: number) => upsert.run(i % 100, payload(i)));
    const loop = (ms: number): number => {
      const started = performance.now();
      let transactions = 0;
      // Immediate, like Baton's group commit: the write lock is taken at BEGIN.
      while (performance.now() - started < ms) commit.immediate(transactions++);
      return transactions;
    };
    loop(warmupMs);
    const before = sampleCpu();
    const transactions = loop(durationMs);
    const after = sampleCpu();
    const seconds = (after.at - before.at) / 1_000;
    return { transactions, seconds, perSecond: transactions / seconds, otherCpus: cpuBetween(before, after).otherCpus };
  } finally {
    sqlite.close();
  }
}
