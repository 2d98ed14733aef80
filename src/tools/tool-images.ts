/**
 * Images a tool returns besides its output (an MCP tool's `image` content): each is stored as an
 * artifact with its media type, the result names them, and a planner whose model accepts images
 * is given them as images.
 */

/** One image, as the tool received it. */
export interface ToolImage {
  /** Its media type, e.g. `image/png`. */
  mediaType: string;
  data: Buffer;
}

/** An image of a result, as the ledger keeps it: the artifact that holds it. */
export interface ToolImageRef {
  sha256: string;
  size: number;
  mediaType: string;
}

/** What `execute` returns to hand the runtime images with its output. */
export class OutputWithImages {
  readonly output: unknown;
  readonly images: readonly ToolImage[];
  constructor(output: unknown, images: readonly ToolImage[]) {
    this.output = output;
    this.images = images;
  }
}
