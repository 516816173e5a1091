// The event-stream reader against the standard's parsing rules, with the stream cut at every
// awkward place: inside a field, between the CR and LF of a line end, inside a UTF-8 character.
import { describe, expect, it } from 'vitest';
import { parseEventStream, type ServerSentEvent } from './event-stream.ts';

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect(chunks: (string | Uint8Array)[], onRetry?: (ms: number) => void): Promise<ServerSentEvent[]> {
  const events: ServerSentEvent[] = [];
  for await (const event of parseEventStream(streamOf(chunks), onRetry)) events.push(event);
  return events;
}

describe('parseEventStream', () => {
  it('reads id, event and data, and joins data lines with newlines', async () => {
    const text = 'id: 1\nevent: NODE_STATUS_UPDATED\ndata: {"a":1}\n\nid: 2\ndata: first\ndata: second\n\n';
    expect(await collect([text])).toEqual([
      { id: '1', event: 'NODE_STATUS_UPDATED', data: '{"a":1}' },
      { id: '2', event: 'message', data: 'first\nsecond' },
    ]);
  });

  it('gives the same events however the bytes are split, CRLF, CR and LF alike', async () => {
    const text = '\uFEFFid: 7\r\nevent: TEST\r\ndata: caf\u00e9 \u2603\r\n\r\nid: 8\rdata: x\r\r: keep-alive\n\nid: 9\ndata: y\n\n';
    const bytes = new TextEncoder().encode(text);
    const expected = [
      { id: '7', event: 'TEST', data: 'caf\u00e9 \u2603' },
      { id: '8', event: 'message', data: 'x' },
      { id: '9', event: 'message', data: 'y' },
    ];
    expect(await collect([bytes])).toEqual(expected);
    // Every split point, one byte at a time included.
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(await collect([bytes.slice(0, cut), bytes.slice(cut)]), `cut at ${cut}`).toEqual(expected);
    }
    expect(await collect([...bytes].map((b) => new Uint8Array([b])))).toEqual(expected);
  });

  it('keeps the last id for later events, ignores comments and unknown fields, and takes one space after the colon', async () => {
    const text = ': hello\nid: 5\ndata:  two spaces\n\nfoo: bar\ndata:no-space\n\ndata\n\n';
    expect(await collect([text])).toEqual([
      { id: '5', event: 'message', data: ' two spaces' },
      { id: '5', event: 'message', data: 'no-space' },
      { id: '5', event: 'message', data: '' },
    ]);
  });

  it('dispatches nothing for a block without data, and drops an event the stream ends inside', async () => {
    expect(await collect(['id: 3\n\nevent: x\n\ndata: cut off\n'])).toEqual([]);
  });

  it('reports retry: delays, and ignores ids with NUL', async () => {
    const delays: number[] = [];
    const events = await collect(['retry: 2500\nretry: soon\nid: 4\ndata: a\n\nid: b\0c\ndata: b\n\n'], (ms) => delays.push(ms));
    expect(delays).toEqual([2500]);
    expect(events.map((e) => e.id)).toEqual(['4', '4']);
  });

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: one\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    for await (const event of parseEventStream(body)) {
      expect(event.data).toBe('one');
      break;
    }
    expect(cancelled).toBe(true);
  });
});
