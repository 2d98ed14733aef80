/** Scenarios for crash tests: a one-call plan run in a child process, and how to spawn it. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createScriptedPlanner, type Risk } from '../../src/index.js';

/** What the child does. */
export interface CrashScenario {
  db: string;
  effects: string;
  tool: string;
  risk?: Risk;
  killAfterEffect?: boolean;
  dieWhenSettled?: boolean;
  approveThenDie?: boolean;
}

/** One call of `tool`, then a final answer that quotes the call's observation. */
export function crashPlanner(tool: string) {
  return createScriptedPlanner((request) =>
    request.stepIndex === 0
      ? { type: 'tool_calls', calls: [{ tool, args: { value: 'effect-1' } }] }
      : { type: 'final', answer: `observed: ${request.messages.at(-1)!.content}` },
  );
}

const child = fileURLToPath(new URL('./crash-child.ts', import.meta.url));

/** Runs the child to its end; resolves with how it ended. */
export function runChild(
  scenario: CrashScenario,
  failpoints?: string,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, JSON.stringify(scenario)], {
      env: { ...process.env, BATON_FAILPOINTS: failpoints ?? '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}
