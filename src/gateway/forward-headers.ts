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

function connectionTokens(raw: string[]): Set<string> {
  const tokens = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const t of raw[i + 1]!.split(',')) if (t.trim()) tokens.add(t.trim().toLowerCase());
  }
  return tokens;
}

export interface ClientFacts {
  address: string;
  proto: 'http' | 'https';
}

/** Raw request headers (name, value, name, value, ...) as the node should receive them. */
export function headersToNode(raw: string[], client: ClientFacts): string[] {
  const listed = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || NEVER_TO_NODE.has(name) || listed.has(name) || name.startsWith('x-forwarded-')) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  out.push('X-Forwarded-For', client.address, 'X-Forwarded-Proto', client.proto);
  return out;
}

/** Raw response headers as the client should receive them: the node's own, less hop-by-hop. */
export function headersToClient(raw: string[]): string[] {
  const listed = connectionTokens(raw);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (HOP_BY_HOP.has(name) || listed.has(name)) continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}
