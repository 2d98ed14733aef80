/**
 * A Baton process for the fork crash test: `source` runs one run of the outage agent to its
 * end and prints `{"source": id}`; `fork` forks that run at a step and prints `{"fork": id}` —
 * unless a failpoint (`fork.copying=kill`) kills it in the middle of the fork's unit first.
 */
import { createRuntime } from '../../src/index.js';
import { outageAgent } from './outage.js';

const config = JSON.parse(process.argv[2]!) as { database: string; phase: 'source' | 'fork'; source?: string };
const runtime = createRuntime({ database: config.database, ...outageAgent({ down: false, planned: [], lookups: [] }) });
await runtime.ready;
if (config.phase === 'source') {
  const run = await runtime.start({ input: 'before the crash' });
  await runtime.wait(run.id);
  process.stdout.write(`${JSON.stringify({ source: run.id })}\n`);
} else {
  const fork = await runtime.fork(config.source!, { atStep: 1 });
  process.stdout.write(`${JSON.stringify({ fork: fork.id })}\n`);
}
await runtime.close();
