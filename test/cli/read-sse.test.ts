import { describe, expect, it } from 'vitest';
import { readSse, type SseMessage } from '../../src/cli/read-sse.js';

/** A body that delivers `chunks` as separate reads. */
function body(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

async function read(chunks: string[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of readSse(body(chunks))) messages.push(message);
  return messages;
}

describe('readSse', () => {
  it('dispatches messages with their event, id and data, skipping comments', async () => {
    const messages = await read([': open\n\n', 'event: state\nid: 3\ndata: {"a":1}\n\n', ': ping\n\n', 'data: x\n\n']);

    expect(messages).toEqual([
      { event: 'state', data: '{"a":1}', id: '3' },
      { event: 'message', data: 'x', id: undefined },
    ]);
  });

  it('joins data lines and accepts CRLF, CR and LF, across chunk boundaries', async () => {
    const messages = await read(['event: dr', 'aft\r\ndata: one\r', '\ndata:two\rdata: three\n', '\n', 'data: cut']);

    expect(messages).toEqual([{ event: 'draft', data: 'one\ntwo\nthree', id: undefined }]);
  });

  it('does not dispatch a message without data', async () => {
    expect(await read(['event: error\nid: 4\n\n'])).toEqual([]);
  });
});
