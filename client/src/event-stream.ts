// A reader of text/event-stream (Server-Sent Events, as the HTML standard defines them) over a
// fetch body: EventSource itself cannot send an Authorization header, and Node has none.
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation

export interface ServerSentEvent {
  /** The last `id:` the stream sent, on this event or an earlier one: what `Last-Event-ID` resumes from. */
  id: string | undefined;
  /** The `event:` field; `message` when there was none. */
  event: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
}

// A lone CR, LF or CRLF ends a line. A CR last in the buffer may be the first half of a CRLF whose
// LF is in the next chunk, so it is left for then.
const LINE_END = /\r\n|\r|\n/g;

/**
 * The events of a stream, in order. `onRetry` hears the reconnection delays the server asks for
 * (`retry:` in ms). An event the stream ends in the middle of is dropped, as EventSource does.
 * Stopping the iteration early cancels the body, closing the connection.
 */
export async function* parseEventStream(body: ReadableStream<Uint8Array>, onRetry?: (ms: number) => void): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  // UTF-8, a leading byte order mark dropped (the standard's decoding).
  const decoder = new TextDecoder();
  let buffer = '';
  let lastEventId: string | undefined;
  let eventType = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let start = 0;
      LINE_END.lastIndex = 0;
      for (let end = LINE_END.exec(buffer); end; end = LINE_END.exec(buffer)) {
        if (end[0] === '\r' && end.index === buffer.length - 1) break;
        const line = buffer.slice(start, end.index);
        start = end.index + end[0].length;
        if (line === '') {
          if (data.length > 0) yield { id: lastEventId, event: eventType || 'message', data: data.join('\n') };
          data = [];
          eventType = '';
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: keep-alives
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') eventType = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) lastEventId = value;
        else if (field === 'retry' && /^[0-9]+$/.test(value)) onRetry?.(Number(value));
      }
      buffer = buffer.slice(start);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
