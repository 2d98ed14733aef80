/**
 * Loading the agent a command runs: `demo` (built in, its tools bound to one config directory)
 * or a module whose default export is `defineAgent(...)`, imported by path.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEMO_AGENT, ensureDemoConfigs } from '../demo/index.js';
import { defineAgent, type Agent, type AnyTool, type ToolContext } from '../index.js';
import { CliError } from './cli-error.js';

/** The demo's config directory when `--dir` is not given. */
export const DEFAULT_DEMO_DIR = './.baton/demo-configs';

/** The demo's config directory for `--dir` (absolute, as runs record it). */
export function demoDir(dir: string | undefined): string {
  return resolve(dir ?? DEFAULT_DEMO_DIR);
}

/**
 * The demo agent with its tools bound to `dir`: whatever a run's context says, they act there,
 * so a client of `baton serve` cannot point them elsewhere. Listing the root first puts back
 * the demo configs an earlier run archived, so every run has something to propose.
 */
function bindDemo(dir: string): Agent {
  const withDir = (ctx: ToolContext): ToolContext => ({ ...ctx, context: { ...ctx.context, configDir: dir } });
  const tools = DEMO_AGENT.tools.map((tool): AnyTool => ({
    ...tool,
    execute(input: unknown, ctx: ToolContext) {
      if (tool.name === 'fs.list' && (input as { path?: string }).path === '.') ensureDemoConfigs(dir);
      return tool.execute(input, withDir(ctx));
    },
    ...(tool.reconcile
      ? { reconcile: (input: unknown, ctx: ToolContext) => tool.reconcile!(input, withDir(ctx)) }
      : {}),
    ...(tool.compensate
      ? {
          compensate: (input: unknown, output: unknown, ctx: ToolContext) =>
            tool.compensate!(input, output, withDir(ctx)),
        }
      : {}),
  }));
  return defineAgent({ ...DEMO_AGENT, tools });
}

function isAgent(value: unknown): value is Agent {
  if (typeof value !== 'object' || value === null) return false;
  const agent = value as Partial<Agent>;
  return typeof agent.name === 'string' && typeof agent.instructions === 'string' && Array.isArray(agent.tools);
}

function loadError(spec: string, message: string): CliError {
  return new CliError({ code: 'agent.invalid', message: `Cannot load agent '${spec}': ${message}` });
}

/**
 * The agent named by `--agent`: `demo`, or a path to a module exporting `defineAgent(...)` by
 * default. A `.ts` module needs a TypeScript loader in the process (`NODE_OPTIONS='--import tsx'`).
 */
export async function loadAgent(spec: string, options: { dir?: string | undefined } = {}): Promise<Agent> {
  if (spec === 'demo') {
    const dir = demoDir(options.dir);
    ensureDemoConfigs(dir);
    return bindDemo(dir);
  }
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(spec)).href)) as { default?: unknown };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_UNKNOWN_FILE_EXTENSION') {
      throw loadError(spec, `Node cannot import it as is; for TypeScript, run with NODE_OPTIONS='--import tsx'`);
    }
    throw loadError(spec, error instanceof Error ? error.message : String(error));
  }
  if (!isAgent(module.default)) {
    throw loadError(spec, 'its default export is not an agent (export default defineAgent({ ... }))');
  }
  return module.default;
}
