/**
 * Hearing other processes over LISTEN/NOTIFY: one connection of its own LISTENs for every
 * listener of a store while there is any, and is re-established if it drops (listeners are then
 * told `reconnected`: what was sent meanwhile is found by polling).
 */
import pg from 'pg';
import type { Store } from '../store-api.js';
import { CHANNELS, parseNote } from './pg-notes.js';

/** The listening side of one store. */
export interface PgListener {
  listen: Store['listen'];
  /** Ends the listening connection; no reconnect after it. */
  close(): Promise<void>;
}

/** Listens on the database at `url` for as long as someone listens. */
export function pgListener(url: string): PgListener {
  const listeners = new Set<Parameters<Store['listen']>[0]>();
  let listening: pg.Client | null = null;
  let reconnect: NodeJS.Timeout | undefined;
  let closed = false;

  async function startListening(): Promise<void> {
    if (closed || listening || listeners.size === 0) return;
    const client = new pg.Client({ connectionString: url });
    listening = client;
    const retry = () => {
      if (listening !== client) return;
      listening = null;
      client.end().catch(() => undefined);
      if (closed || listeners.size === 0) return;
      clearTimeout(reconnect);
      reconnect = setTimeout(() => {
        void startListening().then(() => {
          // Whatever was sent while no one listened is found by polling: say so.
          for (const listener of listeners) listener({ kind: 'reconnected' });
        });
      }, 500);
      reconnect.unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (message) => {
      const note = parseNote(message.channel, message.payload);
      if (note) for (const listener of listeners) listener(note);
    });
    try {
      await client.connect();
      for (const channel of CHANNELS) await client.query(`listen ${channel}`);
    } catch {
      retry();
    }
  }

  return {
    listen(listener) {
      listeners.add(listener);
      void startListening();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && listening) {
          const client = listening;
          listening = null;
          void client.end().catch(() => undefined);
        }
      };
    },
    async close() {
      closed = true;
      clearTimeout(reconnect);
      const client = listening;
      listening = null;
      await client?.end().catch(() => undefined);
    },
  };
}
