/**
 * `baton serve --agent demo` in process, as the inspector's browser tests need it: the demo
 * agent on a temp SQLite file and config directory, a real server on 127.0.0.1 port 0, both
 * closed after the test.
 */
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { loadAgent } from '../../src/cli/load-agent.js';
import { createRuntime, type Planner, type Runtime } from '../../src/index.js';
import { createServer, type AuthConfig, type ServerLimits } from '../../src/server/index.js';
import { tempDir } from './temp.js';

const open: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** A demo server. */
export interface DemoServer {
  url: string;
  runtime: Runtime;
  db: string;
}

/**
 * Serves the demo agent with its scripted planner (never a model configured on the machine), in
 * dev mode unless `auth` has tokens; `planner` wraps it (to count calls, say).
 */
export async function startDemoServer(
  options: { auth?: AuthConfig; planner?: (planner: Planner) => Planner; limits?: Partial<ServerLimits> } = {},
): Promise<DemoServer> {
  const dir = tempDir();
  const db = join(dir, 'baton.db');
  const agent = await loadAgent('demo', { dir: join(dir, 'configs') });
  const scripted = agent.offlinePlanner!;
  const planner = options.planner ? options.planner(scripted) : scripted;
  const runtime = createRuntime({ database: db, planner, tools: agent.tools });
  const server = createServer({
    runtime,
    auth: options.auth ?? { tokens: [] },
    limits: { rateBurst: 10_000, ratePerSecond: 10_000, ...options.limits },
    onError: (error) => console.error(error),
  });
  const listening = await server.listen({ host: '127.0.0.1', port: 0 });
  open.push(async () => {
    await listening.close();
    await runtime.close();
  });
  return { url: listening.url, runtime, db };
}
