/** The demo agent as an agent definition: the model plans it when one is configured, else the script. */
import { defineAgent } from '../agent/define-agent.js';
import { DEMO_INSTRUCTIONS } from './demo-instructions.js';
import { createDemoPlanner } from './demo-planner.js';
import { DEMO_TOOLS } from './demo-tools.js';

/** `baton serve --agent demo`. */
export const DEMO_AGENT = defineAgent({
  name: 'demo',
  instructions: DEMO_INSTRUCTIONS,
  tools: DEMO_TOOLS,
  offlinePlanner: createDemoPlanner(),
});
