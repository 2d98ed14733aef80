/**
 * A child process that serves the server tests' agent: a runtime on the database file given in
 * argv[2] (JSON `{ db, effects, port? }`), tokens from BATON_TOKENS, a server on 127.0.0.1 (port 0 unless given). It
 * prints `{ "url": … }` once listening, and runs until it is killed (SIGTERM closes it cleanly).
 */
import { createRuntime } from '../../src/index.js';
import { createServer, loadAuthConfig } from '../../src/server/index.js';
import { createServerAgent } from './server-agent.js';

const { db, effects, port = 0 } = JSON.parse(process.argv[2]!) as { db: string; effects: string; port?: number };
const agent = createServerAgent(effects);
const runtime = createRuntime({ database: db, planner: agent.planner, tools: agent.tools });
const server = createServer({ runtime, auth: loadAuthConfig() });
const listening = await server.listen({ host: '127.0.0.1', port });
process.stdout.write(`${JSON.stringify({ url: listening.url, pid: process.pid })}\n`);
process.once('SIGTERM', () => {
  void listening
    .close()
    .then(() => runtime.close())
    .then(() => process.exit(0));
});
