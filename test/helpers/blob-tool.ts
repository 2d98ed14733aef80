/** A `read` tool whose output (`rows` lines naming blob `n`) is large enough to be stored as an artifact. */
import { z } from 'zod';
import { defineTool } from '../../src/index.js';

/** `blob.read({ n })`: the same `n` gives the same bytes, so runs reading it share one artifact. */
export function blobTool(rows = 3_000) {
  return defineTool({
    name: 'blob.read',
    description: 'Reads a large blob',
    input: z.object({ n: z.number() }),
    effect: 'read',
    risk: 'low',
    execute: ({ n }) => ({ text: Array.from({ length: rows }, (_, i) => `row ${i} of blob ${n}`).join('\n') }),
  });
}
