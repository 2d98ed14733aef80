/**
 * Which store a `database` option names: a `postgres://` (or `postgresql://`) URL is a
 * PostgreSQL database, anything else a SQLite file. SQLite opens synchronously (an unusable
 * path throws at once); PostgreSQL connects in the background, and every call waits for it.
 */
import type { Store } from './store-api.js';
import { createSqliteStore, type SqliteStore } from './sqlite-store.js';
import { createPostgresStore } from './postgres/pg-store.js';

/** True when `database` is a PostgreSQL URL. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/** An opened store; `sqlite` is the same store, with its file and queue, when it is a SQLite file. */
export interface OpenedStore {
  store: Store;
  sqlite: SqliteStore | null;
  /** Resolves when the database is open and migrated; rejects with `store.open_failed`. */
  opened: Promise<void>;
}

/** Opens the store `database` names. */
export function openStore(database: string, options: { poolSize?: number } = {}): OpenedStore {
  if (!isPostgresUrl(database)) {
    const sqlite = createSqliteStore(database);
    return { store: sqlite, sqlite, opened: Promise.resolve() };
  }
  const opening = createPostgresStore(database, options);
  opening.catch(() => undefined);
  return { store: deferred(opening), sqlite: null, opened: opening.then(() => undefined) };
}

/** A store whose every member waits for `opening`. */
function deferred(opening: Promise<Store>): Store {
  let ready: Store | undefined;
  void opening.then(
    (store) => (ready = store),
    () => undefined,
  );
  return new Proxy({} as Store, {
    get(_target, key: keyof Store | 'then') {
      // Not a promise: `await store` or `Promise.resolve(store)` must give the store itself, not
      // call a `then` that no store has (its rejection went unhandled and ended the process).
      if (key === 'then') return undefined;
      if (key === 'dialect') return 'postgres';
      if (key === 'commits') return ready?.commits ?? 0;
      if (key === 'writeFailure') return ready?.writeFailure ?? null;
      if (key === 'close') return async () => (await opening.catch(() => null))?.close();
      if (key === 'listen') {
        return (listener: Parameters<Store['listen']>[0]) => {
          let off: (() => void) | undefined;
          let cancelled = false;
          void opening.then(
            (store) => {
              if (!cancelled) off = store.listen(listener);
            },
            () => undefined,
          );
          return () => {
            cancelled = true;
            off?.();
          };
        };
      }
      return (...args: unknown[]) =>
        ready
          ? (ready[key] as (...a: unknown[]) => unknown)(...args)
          : opening.then((store) => (store[key] as (...a: unknown[]) => unknown)(...args));
    },
  });
}
