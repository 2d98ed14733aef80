/** What a demo run is asked to do, and over which directory. */
import { resolve } from 'node:path';
import type { StartRequest } from '../index.js';

/** The start request of a demo run over `dir`, on behalf of `user`; each run gets a fresh session. */
export function toDemoStartRequest(dir: string, user: string): StartRequest {
  const configDir = resolve(dir);
  return {
    input: `Archive the stale configs in ${configDir}.`,
    context: { user_id: user, configDir },
  };
}
