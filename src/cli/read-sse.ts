/** A parser for `text/event-stream` bodies (the WHATWG event-stream format), fed by fetch. */

/** One dispatched message: its `event:` type, its `data:` lines joined, and its `id:` if it had one. */
export interface SseMessage {
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * Yields the messages of an event stream as they complete. Comments (`: ping`) and `retry:` are
 * skipped; a message without data is not dispatched; a partial message at the end is dropped.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let match: RegExpExecArray | null;
    // A line ends with CRLF, LF or CR; a CR at the very end may still be followed by an LF.
    while ((match = /\r\n|\n|\r(?!$)/.exec(buffer)) !== null) {
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
        event = '';
        data = [];
        id = undefined;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
  }
}
