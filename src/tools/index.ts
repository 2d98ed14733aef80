/**
 * Tools: declared with zod inputs and an effect class that decides what happens after a crash
 * mid-call; run with a timeout and an AbortSignal; results normalized and large outputs moved
 * to artifacts. Invariant: nothing here touches the ledger; the runtime does.
 */
export * from './define-tool.js';
export * from './tool-result.js';
export * from './tool-images.js';
export { askHuman, HUMAN_ASK, type AskHumanOptions, type HumanAskInput } from './human-ask.js';
export { HANDOFF_BACK } from './handoff-back.js';
export {
  memoryTools,
  MEMORY_READ,
  MEMORY_WRITE,
  MEMORY_SCOPES,
  type MemoryScope,
  type MemoryToolsOptions,
} from './memory-tools.js';
