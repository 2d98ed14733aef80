/**
 * A Baton process for compensation crash tests, one phase each, on one database and one shop
 * journal: `start` runs the shop script to its approval wait and cancels it with compensation,
 * its charge's refund hanging after the refund (a SIGKILL comes); `resume` picks the run up,
 * its archive's restore hanging after the restore (SIGKILL again); `finish` lets it end.
 * Each prints `{"run_id"}` once it has the run.
 */
import { createRuntime, createScriptedPlanner } from '../../src/index.js';
import { createShop, SHOP_SCRIPT, type ShopOptions } from './shop.js';

const { db, journal, phase } = JSON.parse(process.argv[2]!) as { db: string; journal: string; phase: string };
const hangs: Record<string, ShopOptions> = {
  start: { hangAfterUndo: 'shop.charge' },
  resume: { hangAfterUndo: 'shop.archive' },
  finish: {},
};
const runtime = createRuntime({
  database: db,
  planner: createScriptedPlanner(SHOP_SCRIPT),
  tools: createShop(journal, hangs[phase]),
});
await runtime.ready;
if (phase === 'start') {
  const run = await runtime.start({ input: 'handle orders A and B' });
  await runtime.wait(run.id);
  process.stdout.write(`${JSON.stringify({ run_id: run.id })}\n`);
  await runtime.cancel(run.id, { reason: 'customer withdrew', compensate: true });
} else {
  const [run] = (await runtime.list({ limit: 1 })).runs;
  process.stdout.write(`${JSON.stringify({ run_id: run!.id })}\n`);
  const ended = await runtime.wait(run!.id);
  process.stdout.write(`${JSON.stringify({ status: ended.status })}\n`);
}
setInterval(() => undefined, 1 << 30);
