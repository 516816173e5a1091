// The head of a forwarded request as the one string written to the node (latin1, the way node:http
// read the client's bytes): request line, the headers forward-headers.ts lets through (with the
// forwarding headers), Host, and the body's framing. The values are the client's as node:http's
// parser accepted them, which refuses CR, LF and NUL.
import { headersToNode, type ClientFacts } from '../forward-headers.ts';

/** How the body reaches the node: chunked, as "no body" (Content-Length: 0), or as the client's own headers say. */
export type BodyFraming = 'chunked' | 'empty' | 'as-declared';

const FRAMING_LINE: Record<BodyFraming, string> = { chunked: 'Transfer-Encoding: chunked\r\n', empty: 'Content-Length: 0\r\n', 'as-declared': '' };

/** `authorization`: the service's Biscuit for the node (the client's own never passes, forward-headers.ts). */
export function requestHead(method: string, target: string, raw: string[], client: ClientFacts, host: string, framing: BodyFraming, authorization?: string): string {
  const headers = headersToNode(raw, client);
  let head = `${method} ${target} HTTP/1.1\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  if (authorization !== undefined) head += `Authorization: ${authorization}\r\n`;
  return `${head}Host: ${host}\r\n${FRAMING_LINE[framing]}\r\n`;
}
