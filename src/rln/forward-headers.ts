// Which headers cross the gateway. Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection
// and are dropped both ways, with every header the Connection header names. Towards the node the
// caller's credentials never pass (Authorization; Cookie, which browsers also send to these ports
// for the web UI's host), nor what a client could spoof about itself (Forwarded, X-Forwarded-*,
// X-Real-IP): the gateway states the real client address itself. Everything else passes as sent,
// duplicates and case included (raw header lists).

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

const NEVER_TO_NODE = new Set(['authorization', 'cookie', 'host', 'forwarded', 'x-real-ip', 'expect']);
const DROPPED_TO_NODE = new Set([...HOP_BY_HOP, ...NEVER_TO_NODE]);

// These run on every forwarded request: one pass over the raw list, and the Connection header's
// tokens are only collected (a second pass) when there is one, which a kept-alive client rarely sends.
function connectionTokens(raw: string[]): Set<string> | undefined {
  let tokens: Set<string> | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 10 || name.toLowerCase() !== 'connection') continue;
    tokens ??= new Set<string>();
    for (const t of raw[i + 1]!.split(',')) {
      const token = t.trim();
      if (token) tokens.add(token.toLowerCase());
    }
  }
  return tokens;
}

// "Connection: keep-alive", what nearly every client and node sends, names only a header that is
// dropped anyway: no need to collect its tokens.
function hasConnection(raw: string[]): boolean {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length !== 10 || raw[i]!.toLowerCase() !== 'connection') continue;
    const value = raw[i + 1]!;
    if (value.length !== 10 || value.toLowerCase() !== 'keep-alive') return true;
  }
  return false;
}

export interface ClientFacts {
  address: string;
  proto: 'http' | 'https';
}

/** Raw request headers (name, value, name, value, ...) as the node should receive them. */
export function headersToNode(raw: string[], client: ClientFacts): string[] {
  const listed = hasConnection(raw) ? connectionTokens(raw) : undefined;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (passesToNode(raw[i]!, listed)) out.push(raw[i]!, raw[i + 1]!);
  }
  out.push('X-Forwarded-For', client.address, 'X-Forwarded-Proto', client.proto);
  return out;
}

function passesToNode(rawName: string, listed: Set<string> | undefined): boolean {
  const name = rawName.toLowerCase();
  return !(DROPPED_TO_NODE.has(name) || name.startsWith('x-forwarded-') || (listed !== undefined && listed.has(name)));
}

/** Raw response headers as the client should receive them: the node's own, less hop-by-hop. */
export function headersToClient(raw: string[]): string[] {
  const out: string[] = [];
  responseHeadersInto(raw, out);
  return out;
}

/**
 * headersToClient into `out`, answering the node's Content-Length on the way (its first one, as
 * node:http reads it; -1 without one), so the gateway need not build the answer's header object.
 */
export function responseHeadersInto(raw: string[], out: string[]): number {
  const listed = hasConnection(raw) ? connectionTokens(raw) : undefined;
  let contentLength = -1;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || (listed !== undefined && listed.has(name))) continue;
    // CORS is the gateway's decision (gateway-server.ts), never the node's.
    if (name.startsWith('access-control-')) continue;
    if (contentLength === -1 && name === 'content-length') contentLength = Number(raw[i + 1]);
    out.push(raw[i]!, raw[i + 1]!);
  }
  return contentLength;
}
