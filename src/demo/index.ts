/**
 * The built-in demo agent behind `baton demo`: it archives stale service configs. Built only on
 * the public API, like any embedder. Invariant: its tools act only inside the directory the
 * run's context names, and archiving (risk `high`) waits for a human under the default policy.
 */
export { DEMO_CONFIGS, STALE_AFTER_DAYS, ensureDemoConfigs } from './demo-configs.js';
export { ARCHIVE_DIR, DEMO_TOOLS, configsArchive } from './demo-tools.js';
export { DEMO_INSTRUCTIONS } from './demo-instructions.js';
export { DEMO_AGENT } from './demo-agent.js';
export { toDemoStartRequest } from './demo-request.js';
