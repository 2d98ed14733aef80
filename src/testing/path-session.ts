/**
 * The runtime a path runs on: opened on the path's scenario with every actor held at its gate,
 * on a database file that must be fresh, and reopened from that file on a restart.
 */
import type { RunMachineDefinition } from '../../machines/variants.js';
import { createRuntime, type Runtime } from '../runtime/runtime.js';
import { createGates, type Gates } from './gates.js';
import { createPathScenario, type PathScenario } from './path-scenario.js';
import type { RunPath } from './run-model.js';

/** Where and on which machine a path runs. */
export interface PathSessionOptions {
  database: string;
  machine?: RunMachineDefinition;
}

/** A path's scenario, its gates and the runtime open on its file. */
export interface PathSession {
  readonly scenario: PathScenario;
  readonly gates: Gates;
  /** The runtime open now: a new one after each restart. */
  readonly runtime: Runtime;
  /** How many times the runtime was reopened. */
  readonly restarts: number;
  /** Drops the held actors, closes the runtime and opens it again from the file. */
  restart(): Promise<void>;
}

/** Opens the path's runtime; rejects when the file already has runs. */
export async function openPathSession(path: RunPath, options: PathSessionOptions): Promise<PathSession> {
  const scenario = createPathScenario(path);
  // The path's run is held; the child runs of its agent tool go on by themselves (their planner waits for the path).
  const gates = createGates((runId) => !runId.endsWith('.child'));
  const open = () =>
    createRuntime({
      database: options.database,
      planner: scenario.planner,
      tools: scenario.tools,
      policy: scenario.policy,
      agents: [scenario.helper],
      hooks: gates.hooks,
      ...(options.machine ? { machine: options.machine } : {}),
    });
  let runtime: Runtime = open();
  if ((await runtime.list({ limit: 1 })).runs.length > 0) {
    await runtime.close();
    throw new Error(`runPath needs a fresh database file: '${options.database}' already has runs`);
  }
  let restarts = 0;
  return {
    scenario,
    gates,
    get runtime() {
      return runtime;
    },
    get restarts() {
      return restarts;
    },
    async restart() {
      gates.clear();
      await runtime.close();
      runtime = open();
      restarts += 1;
    },
  };
}
