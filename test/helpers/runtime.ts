/** Opening runtimes in tests, and reopening them from the same file to simulate a restart. */
import { afterEach } from 'vitest';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/index.js';

const open: Runtime[] = [];

afterEach(async () => {
  for (const runtime of open.splice(0)) await runtime.close();
});

/** A runtime closed automatically after the test. */
export function openRuntime(options: RuntimeOptions): Runtime {
  const runtime = createRuntime(options);
  open.push(runtime);
  return runtime;
}

/** Closes a runtime and opens a new one on the same file (which resumes its runs). */
export async function restart(runtime: Runtime, options: RuntimeOptions): Promise<Runtime> {
  await runtime.close();
  const reopened = openRuntime(options);
  await reopened.ready;
  return reopened;
}

/** Collects every committed event of a run (not following). */
export async function eventsOf(runtime: Runtime, runId: string) {
  const events = [];
  for await (const event of runtime.events(runId, { follow: false })) events.push(event);
  return events;
}
