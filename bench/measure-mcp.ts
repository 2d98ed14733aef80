/**
 * What a tool costs over MCP: the same 5-step loop of `page.read` calls (10 runs in flight), with
 * the tool in process, from an MCP server over stdio (a child process), and over Streamable HTTP
 * on loopback (another process), in alternating 1-second windows; medians of three windows each,
 * as ratios to the in-process tool, side by side in one process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRuntime, createScriptedPlanner, type AnyTool } from '../src/index.js';
import { createMcpTools, type McpToolset } from '../src/tools/mcp/index.js';
import { formatNumber } from './format-table.js';
import { loopWindow, readLoop } from './read-loop.js';

type Mode = 'in process' | 'MCP stdio' | 'MCP HTTP';
const MODES: Mode[] = ['in process', 'MCP stdio', 'MCP HTTP'];
const STEPS = 5;
const SERVER = fileURLToPath(new URL('./mcp-echo-server.ts', import.meta.url));

export interface McpCost {
  runsPerSecond: Record<Mode, number>;
  /** The same server's tool called directly (no runtime, no ledger), 10 calls in flight: the transport's own rate. */
  directCallsPerSecond: Record<Exclude<Mode, 'in process'>, number>;
}

/** Calls of `tool` per second, 10 in flight, with no runtime around them. */
async function direct(tool: AnyTool, ms: number): Promise<number> {
  const until = performance.now() + ms;
  let calls = 0;
  await Promise.all(
    Array.from({ length: 10 }, async (_, lane) => {
      while (performance.now() < until) {
        const key = `direct-${lane}-${calls}`;
        await tool.execute(
          { n: 1 },
          // A signal per call, as the runtime gives: the SDK listens on each.
          {
            runId: 'bench',
            toolCallId: key,
            idempotencyKey: key,
            signal: new AbortController().signal,
            context: {},
            attempt: 1,
          },
        );
        calls += 1;
      }
    }),
  );
  return calls / (ms / 1_000);
}

/** The HTTP server in a process of its own, until `kill()`. */
async function httpServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, '--http'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && out.includes('\n')) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`the bench's MCP HTTP server exited (${code})`)));
  });
  return { url, child };
}

/** Measures the three modes on files in `dir`. */
export async function measureMcp(dir: string, windowMs = 1_000): Promise<McpCost> {
  const local = readLoop(STEPS);
  const http = await httpServer();
  const sets: McpToolset[] = [];
  try {
    const stdio = await createMcpTools({ command: process.execPath, args: ['--import', 'tsx', SERVER, '--stdio'] });
    sets.push(stdio);
    const remote = await createMcpTools({ url: http.url });
    sets.push(remote);
    const tools: Record<Mode, AnyTool[]> = {
      'in process': local.tools,
      'MCP stdio': stdio.tools,
      'MCP HTTP': remote.tools,
    };
    const samples: Record<Mode, number[]> = { 'in process': [], 'MCP stdio': [], 'MCP HTTP': [] };
    const directs = { 'MCP stdio': [] as number[], 'MCP HTTP': [] as number[] };
    for (let round = 0; round < 3; round += 1) {
      directs['MCP stdio'].push(await direct(stdio.tools[0]!, windowMs));
      directs['MCP HTTP'].push(await direct(remote.tools[0]!, windowMs));
      for (const mode of MODES) {
        const runtime = createRuntime({
          database: join(dir, `mcp-${round}-${mode.replace(' ', '-')}.db`),
          planner: createScriptedPlanner((r) =>
            r.stepIndex < STEPS
              ? { type: 'tool_calls', calls: [{ tool: 'page.read', args: { n: r.stepIndex } }] }
              : { type: 'final', answer: 'ok' },
          ),
          tools: tools[mode],
        });
        try {
          await runtime.ready;
          samples[mode].push(await loopWindow(runtime, windowMs));
        } finally {
          await runtime.close();
        }
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
    return {
      runsPerSecond: {
        'in process': median(samples['in process']),
        'MCP stdio': median(samples['MCP stdio']),
        'MCP HTTP': median(samples['MCP HTTP']),
      },
      directCallsPerSecond: { 'MCP stdio': median(directs['MCP stdio']), 'MCP HTTP': median(directs['MCP HTTP']) },
    };
  } finally {
    await Promise.all(sets.map((set) => set.close()));
    http.child.kill('SIGKILL');
  }
}

/** The MCP rows of the report. */
export function formatMcp(cost: McpCost): string {
  const base = cost.runsPerSecond['in process'];
  const rows = MODES.map((mode) => {
    const runs = cost.runsPerSecond[mode];
    const calls = runs * STEPS;
    const alone = mode === 'in process' ? null : cost.directCallsPerSecond[mode];
    return `  ${mode.padEnd(12)} ${formatNumber(Math.round(runs)).padStart(7)} runs/s ${formatNumber(Math.round(calls)).padStart(8)} tool calls/s  ${(runs / base).toFixed(2)}× in process${alone ? `; the tool called alone: ${formatNumber(Math.round(alone))} calls/s (Baton at ${(calls / alone).toFixed(2)}× of it)` : ''}`;
  });
  return [
    `MCP tools (${STEPS}-step loop of one read-only tool, 10 runs in flight, median of 3 alternating 1 s windows):`,
    ...rows,
  ].join('\n');
}
