/** Error bodies of OpenAI-compatible servers, brought to the shape the `openai` client reads. */

/**
 * OpenAI's shape, `{ "error": { "message", "type", "code" } }`, unchanged; the flat
 * `{ "object": "error", "message": … }` of older vLLM and FastChat, and `{ "error": "text" }`,
 * wrapped into it. The client reads only `body.error`, so without this their message is lost
 * ("400 status code (no body)") and a context-length error cannot be told from any other.
 */
export function toErrorBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  if (typeof record.error === 'string') return { ...record, error: { message: record.error } };
  if (record.error === undefined && typeof record.message === 'string') return { error: record };
  return body;
}
