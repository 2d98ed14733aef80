/**
 * The real server for tests: a runtime on a temp SQLite file, `createServer` on 127.0.0.1 port 0,
 * both closed after the test; and a small JSON client over `fetch`.
 */
import { afterEach } from 'vitest';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/index.js';
import { createServer, type AuthConfig, type ServerLimits } from '../../src/server/index.js';
import { createServerAgent } from './server-agent.js';
import { tempFiles } from './temp.js';
import { scaled } from './limits.js';

const open: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close();
});

/** A test token (long enough for the configuration's check). */
export function token(name: string): string {
  return `tok_${name}_0123456789abcdef`;
}

/** Tokens of two tenants: `acme` (submit+view, approve, view only, admin) and `globex` (admin). */
export const TEST_AUTH: AuthConfig = {
  tokens: [
    { token: token('acme-submit'), tenant: 'acme', roles: ['submit', 'view'], name: 'acme-bot' },
    { token: token('acme-approve'), tenant: 'acme', roles: ['approve', 'view'], name: 'alice' },
    { token: token('acme-view'), tenant: 'acme', roles: ['view'], name: 'viewer' },
    { token: token('acme-admin'), tenant: 'acme', roles: ['admin'], name: 'acme-admin' },
    { token: token('globex-admin'), tenant: 'globex', roles: ['admin'], name: 'globex-admin' },
  ],
};

/** A started test server. */
export interface TestServer {
  url: string;
  runtime: Runtime;
  effects: string;
  db: string;
  close(): Promise<void>;
}

/** Starts a runtime and a server on an ephemeral loopback port, closed after the test. */
export async function startTestServer(
  options: {
    auth?: AuthConfig;
    limits?: Partial<ServerLimits>;
    /** Runtime options that replace the test agent's (machine, planner, tools, policy). */
    runtime?: (effects: string) => Partial<RuntimeOptions>;
    /** The database file (default: a new one in a temp directory). */
    database?: string;
  } = {},
): Promise<TestServer> {
  const files = tempFiles();
  const { effects } = files;
  const db = options.database ?? files.db;
  const agent = createServerAgent(effects);
  const runtime = createRuntime({
    database: db,
    planner: agent.planner,
    tools: agent.tools,
    ...options.runtime?.(effects),
  });
  const server = createServer({
    runtime,
    auth: options.auth ?? TEST_AUTH,
    limits: { rateBurst: 10_000, ratePerSecond: 10_000, ...options.limits },
    onError: (error) => console.error(error),
  });
  const listening = await server.listen({ host: '127.0.0.1', port: 0 });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await listening.close();
    await runtime.close();
  };
  open.push(close);
  return { url: listening.url, runtime, effects, db, close };
}

/** A JSON body as tests read it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** What one request answered. */
export interface Reply {
  status: number;
  headers: Headers;
  body: Json;
}

/** A JSON client for one base URL and (optionally) one token. */
export function apiClient(url: string, bearer?: string) {
  return async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const all: Record<string, string> = { ...headers };
    if (bearer) all.authorization = `Bearer ${bearer}`;
    if (body !== undefined) all['content-type'] ??= 'application/json';
    const response = await fetch(`${url}${path}`, {
      method,
      headers: all,
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Json) : null };
  };
}

export type ApiClient = ReturnType<typeof apiClient>;

/** Polls a run until `done` says so. */
export async function pollRun(
  call: ApiClient,
  runId: string,
  done: (run: Json) => boolean,
  timeoutMs = scaled(10_000),
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await call('GET', `/v1/runs/${runId}`);
    if (reply.status === 200 && done(reply.body)) return reply.body as Json;
    if (Date.now() > deadline) throw new Error(`Run ${runId} did not get there: ${JSON.stringify(reply.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
