/**
 * What the answer to a `tools/call` becomes: a result's output (its images apart, as artifacts to
 * be), its text for a failure message, or why the server refused the request.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OutputWithImages, type ToolImage } from '../tool-images.js';
import { sessionGone } from './connection.js';

/** The result's text, for a failure message. */
export function textOf(result: CallToolResult): string {
  const texts = result.content.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text);
  return texts.join('\n').trim();
}

/**
 * A result as the tool's output: its structured content, else its text, else its content
 * blocks; its images go with it (`OutputWithImages`), to be stored as artifacts of their media
 * type rather than as base64 inside the output.
 */
export function outputOf(result: CallToolResult): unknown {
  const images: ToolImage[] = [];
  const rest: CallToolResult['content'] = [];
  for (const block of result.content) {
    if (block.type === 'image') images.push({ mediaType: block.mimeType, data: Buffer.from(block.data, 'base64') });
    else rest.push(block);
  }
  const output =
    result.structuredContent !== undefined
      ? result.structuredContent
      : rest.every((c) => c.type === 'text')
        ? textOf({ ...result, content: rest })
        : rest;
  return images.length > 0 ? new OutputWithImages(output, images) : output;
}

/**
 * The server refused the request instead of running it: a JSON-RPC error response (invalid
 * request or params, an unknown tool or method, any protocol-level error), or an HTTP 4xx
 * (unauthorized, forbidden, bad request) before the request reached MCP at all. A tool that ran
 * and failed answers with a result that has `isError` instead. A `404` for a lost session (or a
 * `400` that says the session is unknown) is not among them: the connection sends it again on a
 * new session; nor is a connection lost mid-call, which the connection reports as an unknown
 * outcome before this is asked.
 */
export function refusal(error: unknown): string | null {
  if (error instanceof StreamableHTTPError) {
    const refused = error.code !== undefined && error.code >= 400 && error.code < 500 && !sessionGone(error);
    return refused ? error.message : null;
  }
  if (!(error instanceof McpError)) return null;
  const name = Object.entries(ErrorCode).find(([, code]) => code === error.code)?.[0];
  return `JSON-RPC error ${error.code}${name ? ` (${name})` : ''}: ${error.message}`;
}
