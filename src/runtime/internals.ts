/**
 * What only Baton's own tests reach behind the public API: a runtime's store. Not exported from
 * the package; embedders, the testing harness and the bench use `Runtime`'s documented members.
 */
import type { SqliteStore } from '../store/index.js';
import type { Runtime } from './runtime-api.js';

const stores = new WeakMap<Runtime, SqliteStore>();

/** Called by `createRuntime` once. */
export function registerStore(runtime: Runtime, store: SqliteStore): void {
  stores.set(runtime, store);
}

/** The store under a runtime, for white-box tests that check rows directly. */
export function storeOf(runtime: Runtime): SqliteStore {
  const store = stores.get(runtime);
  if (!store) throw new Error('Not a runtime made by createRuntime');
  return store;
}
