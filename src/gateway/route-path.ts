// Reads a gateway request target: `<prefix>/<user_id>/<node_id>/<route>?<query>`. The route is
// checked segment by segment on the raw bytes the client sent, never after a normalisation that
// could resolve `..` (raw or percent-encoded) into another user's or node's path, and it is
// forwarded in one canonical form, so what the gateway classifies ("is this /unlock?") is exactly
// what the node receives.

export type GatewayPath =
  | { ok: true; userId: string; nodeId: string; /** '' for the node itself, else e.g. 'nodeinfo' */ route: string; search: string }
  | { ok: false; code: 'not_found' | 'invalid_path'; message: string };

const ID = /^[0-9a-f]{32}$/;
const UNRESERVED = /[A-Za-z0-9\-._~]/;
// Visible ASCII without "%" and "\\": a segment of only these is already canonical (as long as it
// is not "." or ".."), which is what nearly every route segment is.
const PLAIN_SEGMENT = /^[\x21-\x24\x26-\x5b\x5d-\x7e]+$/;

const invalid = (message: string): GatewayPath => ({ ok: false, code: 'invalid_path', message });
const notFound = (prefix: string): GatewayPath => ({ ok: false, code: 'not_found', message: `expected ${prefix}/<user_id>/<node_id>/<route>` });

/**
 * RFC 3986 normalisation of one segment: escapes of unreserved characters are decoded, other
 * escapes upper-cased. Answers undefined for a segment that could leave the route: `.` or `..`
 * in any spelling, an encoded `/` or `\`, NUL and control characters, malformed escapes.
 */
export function canonicalSegment(raw: string): string | undefined {
  if (PLAIN_SEGMENT.test(raw)) return raw === '.' || raw === '..' ? undefined : raw;
  if (raw.includes('\\')) return undefined;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch !== '%') {
      if (ch.charCodeAt(0) < 0x21 || ch.charCodeAt(0) === 0x7f) return undefined;
      out += ch;
      continue;
    }
    const hex = raw.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
    const code = parseInt(hex, 16);
    const decoded = String.fromCharCode(code);
    if (code < 0x20 || code === 0x7f || decoded === '/' || decoded === '\\') return undefined;
    out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
    i += 2;
  }
  if (out === '.' || out === '..') return undefined;
  return out;
}

export function parseGatewayPath(target: string, prefix: '' | '/nodes'): GatewayPath {
  // Origin form only: absolute-form ("GET http://elsewhere/...") and "*" have no place here.
  if (!target.startsWith('/')) return invalid('the request target must be a path');
  const q = target.indexOf('?');
  const rawPath = q === -1 ? target : target.slice(0, q);
  const search = q === -1 ? '' : target.slice(q);
  if (rawPath.includes('#')) return invalid('the path must not contain "#"');
  // The bearer gateway also answers the original's form, `/nodes/<user_id>/<node_id>/<route>`
  // (its invoke_url), beside its own: a user id is 32 hex digits, never "nodes".
  if (prefix === '' && rawPath.startsWith('/nodes/')) prefix = '/nodes';
  if (!rawPath.startsWith(prefix) || rawPath[prefix.length] !== '/') return notFound(prefix);
  const segments = rawPath.slice(prefix.length + 1).split('/');
  const userId = segments[0];
  const nodeId = segments[1];
  if (!userId || !nodeId || !ID.test(userId) || !ID.test(nodeId)) return notFound(prefix);
  // The common case, one plain segment (e.g. `nodeinfo`): no further copies.
  if (segments.length === 3 && segments[2] !== '' && canonicalSegment(segments[2]!) === segments[2]) {
    return { ok: true, userId, nodeId, route: segments[2]!, search };
  }
  // Repeated slashes collapse, as clients write paths: the invoke URL the UI copies ends in "/" and
  // a wallet appends "/nodeinfo" to it (`<node_id>//nodeinfo` is `<node_id>/nodeinfo`). A trailing
  // slash stays (`nodeinfo/` is not `nodeinfo`), once.
  const routeSegments = segments.slice(2);
  const trailingSlash = routeSegments.length > 0 && routeSegments[routeSegments.length - 1] === '';
  const canonical: string[] = [];
  for (const segment of routeSegments) {
    if (segment === '') continue;
    const clean = canonicalSegment(segment);
    if (clean === undefined) return invalid(`the route segment "${segment.slice(0, 64)}" is not allowed (no "." or "..", encoded "/" or "\\", or control characters)`);
    canonical.push(clean);
  }
  if (trailingSlash && canonical.length > 0) canonical.push('');
  return { ok: true, userId, nodeId, route: canonical.join('/'), search };
}
