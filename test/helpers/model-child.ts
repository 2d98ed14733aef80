/**
 * A child process that drives one run with the OpenAI-compatible planner against the parent's
 * fake Chat Completions server, until it ends or something kills it (BATON_FAILPOINTS).
 */
import { createOpenAIPlanner, createRuntime } from '../../src/index.js';
import { createWorld } from './world.js';

const { db, effects, baseURL } = JSON.parse(process.argv[2]!) as { db: string; effects: string; baseURL: string };
const runtime = createRuntime({
  database: db,
  planner: createOpenAIPlanner({ model: 'fake-model', baseURL, apiKey: 'test', instructions: 'Test.' }),
  tools: createWorld(effects).all(),
});
const run = await runtime.start({ input: 'crash while the model answers', sessionId: 'model' });
await runtime.wait(run.id);
await runtime.close();
