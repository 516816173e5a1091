import { describe, expect, it } from 'vitest';
import { AnswerError, NodeAnswerParser, type AnswerHead } from './answer-parser.ts';

/** Feeds `parts` (each one read) and records what the parser told its sink. */
function parse(parts: string[], opts: { noBody?: boolean; close?: boolean } = {}) {
  const seen = { head: undefined as AnswerHead | undefined, body: '', last: false, ended: undefined as boolean | undefined };
  const parser = new NodeAnswerParser();
  parser.reset(
    {
      head: (h) => ((seen.head = h), true),
      body: (data, start, end, last) => {
        seen.body += data.toString('latin1', start, end);
        seen.last ||= last;
        return true;
      },
      end: (reusable) => (seen.ended = reusable),
    },
    opts.noBody ?? false,
  );
  for (const p of parts) {
    // Each read at an offset inside a larger buffer, as the connection's read buffer is reused.
    const data = Buffer.from(`junk${p}junk`, 'latin1');
    parser.execute(data, 4, data.length - 4);
  }
  if (opts.close) parser.closed();
  return { ...seen, done: parser.done };
}

const OK = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n';

describe('NodeAnswerParser', () => {
  it('reads a Content-Length answer, head and body, in one read or byte by byte', () => {
    const whole = `${OK}Content-Length: 11\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\n{"ok":true}`;
    for (const parts of [[whole], whole.split('')]) {
      const r = parse(parts);
      expect(r.head).toEqual({ status: 200, reason: 'OK', rawHeaders: ['Content-Type', 'application/json', 'Content-Length', '11', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'], length: 11 });
      expect(r).toMatchObject({ body: '{"ok":true}', last: true, ended: true, done: true });
    }
  });

  it('decodes chunked bodies split anywhere, drops trailers, and keeps the connection', () => {
    const whole = `${OK}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n`;
    for (const parts of [[whole], whole.split(''), [whole.slice(0, 60), whole.slice(60)]]) {
      const r = parse(parts);
      expect(r.head!.length).toBe(-1);
      expect(r).toMatchObject({ body: 'hello world', last: true, ended: true });
    }
  });

  it('reads a body without length until the node closes, and never reuses that connection', () => {
    const r = parse([`${OK}\r\nsome`, ' bytes'], { close: true });
    expect(r).toMatchObject({ body: 'some bytes', last: true, ended: false });
  });

  it('does not reuse a connection the node asked to close, or an HTTP/1.0 one', () => {
    expect(parse([`${OK}Connection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n`]).ended).toBe(false);
    expect(parse(['HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n']).ended).toBe(false);
  });

  it('has no body after HEAD, 204 and 304, whatever the head declares', () => {
    expect(parse([`${OK}Content-Length: 50\r\n\r\n`], { noBody: true })).toMatchObject({ body: '', ended: true });
    expect(parse(['HTTP/1.1 204 No Content\r\nContent-Length: 50\r\n\r\n'])).toMatchObject({ body: '', ended: true });
    expect(parse(['HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n'])).toMatchObject({ body: '', ended: true });
  });

  it('skips an interim 1xx answer and reads the one after it', () => {
    const r = parse([`HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n${OK}Content-Length: 2\r\n\r\nok`]);
    expect(r).toMatchObject({ head: { status: 200 }, body: 'ok', ended: true });
  });

  it.each([
    ['a malformed status line', ['HTTP/1.1 2000 OK\r\n\r\n']],
    ['a status line of another protocol', ['HTTP/2 200 OK\r\n\r\n']],
    ['a header without a colon', [`${OK}Broken\r\n\r\n`]],
    ['a header name with a space', [`${OK}Content-Length : 2\r\n\r\nok`]],
    ['a folded header', [`${OK}X-A: 1\r\n continued\r\nContent-Length: 0\r\n\r\n`]],
    ['a bare LF inside a header value', [`${OK}X-A: 1\nContent-Length: 5\r\nContent-Length: 0\r\n\r\n`]],
    ['a NUL in a header value', [`${OK}X-A: a\u0000b\r\nContent-Length: 0\r\n\r\n`]],
    ['two different Content-Lengths', [`${OK}Content-Length: 2\r\nContent-Length: 3\r\n\r\nok`]],
    ['a list of different Content-Lengths', [`${OK}Content-Length: 2, 3\r\n\r\nok`]],
    ['a signed Content-Length', [`${OK}Content-Length: +2\r\n\r\nok`]],
    ['Content-Length with Transfer-Encoding', [`${OK}Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`]],
    ['Transfer-Encoding other than chunked', [`${OK}Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`]],
    ['Transfer-Encoding twice', [`${OK}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`]],
    ['a malformed chunk size', [`${OK}Transfer-Encoding: chunked\r\n\r\n-1\r\n`]],
    ['a chunk longer than it said', [`${OK}Transfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n`]],
    ['a chunk line ending in a bare LF', [`${OK}Transfer-Encoding: chunked\r\n\r\n2\nab\r\n0\r\n\r\n`]],
    ['bytes after the end of the answer', [`${OK}Content-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n\r\n`]],
    ['a switch of protocols', ['HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n']],
    ['a head larger than 16 KiB', [`${OK}X-Big: ${'a'.repeat(17 * 1024)}`]],
  ])('refuses %s', (_what, parts) => {
    expect(() => parse(parts)).toThrow(AnswerError);
  });

  it('calls a close in the middle of an answer an error', () => {
    expect(() => parse([`${OK}Content-Length: 10\r\n\r\nshort`], { close: true })).toThrow(AnswerError);
    expect(() => parse([`${OK}Transfer-Encoding: chunked\r\n\r\n5\r\nhel`], { close: true })).toThrow(AnswerError);
    expect(() => parse(['HTTP/1.1 200 OK\r\nContent-Le'], { close: true })).toThrow(AnswerError);
  });
});
