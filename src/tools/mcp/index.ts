/**
 * MCP tools (`baton-runtime/mcp`): an MCP server's tools as Baton tools, over stdio or
 * Streamable HTTP. A subpath of its own, so applications that use no MCP server never load the
 * SDK (nor its declarations: the public types here name none of the SDK's).
 */
export {
  createMcpTools,
  MCP_META,
  type McpToolset,
  type McpSkippedTool,
  type McpToolsOptions,
  type McpToolOverride,
} from './create-mcp-tools.js';
export { mapAnnotations, type McpAnnotations, type SafetyMapping } from './annotations.js';
export type { McpServerSpec, McpStdioServer, McpHttpServer } from './server-spec.js';
